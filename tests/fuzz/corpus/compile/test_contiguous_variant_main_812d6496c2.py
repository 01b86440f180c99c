#!target hip gfx906
#!func main
#!bind M = 64
#!bind N = 96
#!bind T = module(tilec.language)
#!bind block_M = 32
#!bind block_N = 32
@T.prim_func
def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_N), "float16")
        B_f = T.alloc_fragment((block_M, block_N), "float16")
        T.copy(A[by * block_M, bx * block_N], A_s)
        for i, j in T.Parallel(block_M, block_N):
            B_f[i, j] = A_s[i, j] * 2
        T.copy(B_f, B[by * block_M, bx * block_N])
