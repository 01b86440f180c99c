#!target cuda sm_90a
#!func main
#!bind K = 512
#!bind M = 512
#!bind N = 512
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 128
#!bind bN = 128
#!bind register_a = False
#!bind threads = 256
@T.prim_func
def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
        if register_a:
            A_t = T.alloc_fragment((bM, bK), "bfloat16")
        else:
            A_t = T.alloc_shared((bM, bK), "bfloat16")
        B_s = T.alloc_shared((bK, bN), "bfloat16")
        P_f = T.alloc_fragment((bM, bN), "float32")
        C_f = T.alloc_fragment((bM, bN), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
            T.copy(A[by * bM, k * bK], A_t)
            T.copy(B[k * bK, bx * bN], B_s)
            T.gemm(A_t, B_s, P_f, clear_accum=True)
            for i, j in T.Parallel(bM, bN):
                C_f[i, j] += P_f[i, j]
        T.copy(C_f, C[by * bM, bx * bN])
