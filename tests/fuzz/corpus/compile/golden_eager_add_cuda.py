#!target cuda sm_90a
#!func add
#!bind M = 100
#!bind N = 48
#!bind block = 32
# func: add
# defines: M=100 N=48 block=32
import tilec as tilelang
import tilec.language as T


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
