#!target cuda sm_90a
#!func main
#!bind K = 512
#!bind M = 512
#!bind N = 512
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 128
#!bind bN = 128
#!bind threads = 256
@T.prim_func
def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
        A_f = T.alloc_fragment((bM, bK), "bfloat16")
        B_s = T.alloc_shared((bK, bN), "bfloat16")
        C_l = T.alloc_fragment((bM, bN), "float32")
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=3):
            T.copy(A[by * bM, k * bK], A_f)
            T.copy(B[k * bK, bx * bN], B_s)
            T.gemm(A_f, B_s, C_l)
        T.copy(C_l, C[by * bM, bx * bN])
