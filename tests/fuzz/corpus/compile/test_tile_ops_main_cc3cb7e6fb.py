#!target hip gfx940
#!func main
#!bind M = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind block = 32
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        for i, j in T.Parallel(block, block):
            row = by * block + i
            col = bx * block + j
            if row < M and col < N:
                C[row, col] = A[row, col] * 2 + row * 1000 + col
