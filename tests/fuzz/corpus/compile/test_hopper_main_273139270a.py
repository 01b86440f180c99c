#!target cuda sm_90a
#!func main
#!bind K = 512
#!bind M = 256
#!bind N = 128
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 64
#!bind bN = 128
#!bind threads = 256
@T.prim_func
def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), R: T.Tensor((M,), "float32")):
    with T.Kernel(T.ceildiv(M, bM), threads=threads) as bx:
        A_s = T.alloc_shared((bM, bK), "bfloat16")
        B_s = T.alloc_shared((bN, bK), "bfloat16")
        S = T.alloc_fragment((bM, bN), "float32")
        row_max = T.alloc_fragment((bM,), "float32")
        T.fill(row_max, -T.infinity("float32"))
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
            T.copy(A[bx * bM, k * bK], A_s)
            T.copy(B[0, k * bK], B_s)
            T.gemm(A_s, B_s, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
            T.reduce_max(S, row_max, dim=1, clear=False)
        T.copy(row_max, R[bx * bM])
