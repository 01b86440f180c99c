#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
import tilec.language as T


# A ReLU into a 16-bit fragment, the A of a gemm from registers (the DSA indexer's head sums):
# T.max's form (a pair converted, then its max) and the select's (one clamping conversion).
@T.prim_func
def main(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 64), "float16"), W: T.Tensor((8, 64), "bfloat16"),
         D: T.Tensor((128, 8), "float32"), E: T.Tensor((128, 8), "float32")):
    with T.Kernel(1, threads=128):
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        W_s = T.alloc_shared((8, 64), "bfloat16")
        S_f = T.alloc_fragment((128, 64), "float32")
        R_f = T.alloc_fragment((128, 64), "bfloat16")
        Q_f = T.alloc_fragment((128, 64), "bfloat16")
        D_f = T.alloc_fragment((128, 8), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.copy(W, W_s)
        T.gemm(A_s, B_s, S_f, transpose_B=True, clear_accum=True)
        for i, j in T.Parallel(128, 64):
            R_f[i, j] = T.max(S_f[i, j], 0)
        for i, j in T.Parallel(128, 64):
            Q_f[i, j] = T.if_then_else(S_f[i, j] < 0, 0, S_f[i, j])
        T.gemm(R_f, W_s, D_f, transpose_B=True, clear_accum=True)
        T.copy(D_f, D)
        T.gemm(Q_f, W_s, D_f, transpose_B=True, clear_accum=True)
        T.copy(D_f, E)
