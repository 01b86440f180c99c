#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind K = 256
#!bind M = 256
#!bind N = 256
#!bind T = module(tilec.language)
#!bind block = 64
#!bind block_k = 32
#!bind dtype = "bfloat16"
#!bind stages = 3
#!bind threads = 128
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block, block_k), dtype)
        B_s = T.alloc_shared((block_k, block), dtype)
        C_f = T.alloc_fragment((block, block), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_k), num_stages=stages):
            T.copy(A[by * block, k * block_k], A_s)
            T.copy(B[k * block_k, bx * block], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block, bx * block])
