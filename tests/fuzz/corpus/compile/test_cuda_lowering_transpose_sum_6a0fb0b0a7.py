#!target cuda sm_90a
#!func transpose_sum
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def transpose_sum(A: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "bfloat16")
        P = T.alloc_fragment((64, 64), "float32")
        Q = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.gemm(A_s, A_s, P, clear_accum=True)
        T.gemm(A_s, A_s, Q, clear_accum=True)
        for i, j in T.Parallel(64, 64):
            P[i, j] = P[i, j] + Q[j, i]
        T.copy(P, C)
