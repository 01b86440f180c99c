#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind m = sym(m)
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((m, 256), "bfloat16"), B: T.Tensor((64, 256), "bfloat16"), C: T.Tensor((m, 64), "float32")):
    with T.Kernel(T.ceildiv(m, 64), threads=256) as bx:
        A_s = T.alloc_shared((64, 256), "bfloat16")
        B_s = T.alloc_shared((64, 256), "bfloat16")
        C_l = T.alloc_fragment((64, 64), "float32")
        T.copy(A[bx * 64, 0], A_s)
        T.copy(B, B_s)
        T.clear(C_l)
        T.gemm(A_s[:, 0:128], B_s[:, 0:128], C_l, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.gemm(A_s[:, 128:256], B_s[:, 128:256], C_l, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.reduce_max(C_l, C_l[:, 0], dim=1)
        T.copy(C_l, C[bx * 64, 0])
