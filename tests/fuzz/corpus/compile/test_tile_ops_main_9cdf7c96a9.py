#!target hip gfx940
#!func main
#!bind M = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind block_M = 32
#!bind block_N = 16
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
         C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_N), "float32")
        B_f = T.alloc_fragment((block_M, block_N), "float32")
        C_f = T.alloc_fragment((block_M, block_N), "float32")
        T.copy(A[by * block_M, bx * block_N], A_s)
        T.copy(B[by * block_M, bx * block_N], B_f)
        for i, j in T.Parallel(block_M, block_N):
            C_f[i, j] = A_s[i, j] * B_f[i, j] + A_s[i, j]
        T.copy(C_f, C[by * block_M, bx * block_N])
