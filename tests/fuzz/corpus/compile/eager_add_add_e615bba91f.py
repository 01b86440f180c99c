#!target hip gfx906
#!func add
#!bind M = 100
#!bind N = 48
#!bind T = module(tilec.language)
#!bind block = 32
#!bind tilelang = module(tilec)
@tilelang.jit
def add(A, B, block: int = 32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float16")
    B: T.Tensor((M, N), "float16")
    C = T.empty((M, N), "float16")
    with T.Kernel(T.ceildiv(M, block), T.ceildiv(N, block)) as (bx, by):
        for i, j in T.Parallel(block, block):
            row = bx * block + i
            col = by * block + j
            if row < M and col < N:
                C[row, col] = A[row, col] + B[row, col]
    return C
