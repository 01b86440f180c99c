#!target hip gfx906
#!func main
#!bind K = 70
#!bind M = 48
#!bind N = 40
#!bind T = module(tilec.language)
#!bind block_K = 32
#!bind block_M = 32
#!bind block_N = 32
@T.prim_func
def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
         C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), "float32")
        B_s = T.alloc_shared((block_K, block_N), "float32")
        C_f = T.alloc_fragment((block_M, block_N), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * block_N])
