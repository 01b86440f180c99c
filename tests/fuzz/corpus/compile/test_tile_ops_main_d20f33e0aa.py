#!target hip gfx90a
#!func main
#!bind M = 64
#!bind N = 256
#!bind T = module(tilec.language)
#!bind block_M = 16
#!bind block_N = 128
#!bind dtype = "float16"
@T.prim_func
def main(A: T.Tensor((M, N), dtype), shift: T.Tensor((M,), dtype), B: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        f = T.alloc_fragment((block_M, block_N), dtype)
        for i, j in T.Parallel(block_M, block_N):
            f[i, j] = A[by * block_M + i, bx * block_N + j] * 2
        for i, j in T.Parallel(block_M, block_N):
            B[by * block_M + i, bx * block_N + j] = f[i, j] + shift[by * block_M + i]
