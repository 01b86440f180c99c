#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind k_pack = 2
#!bind mbar = None
#!bind wg_wait = -1
@T.prim_func
def main(A: T.Tensor((64, 32), "bfloat16"), B: T.Tensor((32, 64), "bfloat16"),
         C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "bfloat16")
        B_s = T.alloc_shared((32, 64), "bfloat16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f, False, False, T.GemmWarpPolicy.FullRow, True, k_pack, wg_wait, mbar)
        T.wait_wgmma(0)
        T.copy(C_f, C)
