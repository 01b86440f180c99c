#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind dtype = "bfloat16"
#!bind policy = None
@T.prim_func
def main(A: T.Tensor((64, 32), dtype), B: T.Tensor((64, 32), dtype), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), dtype)
        A_f = T.alloc_fragment((64, 32), dtype)
        B_s = T.alloc_shared((64, 32), dtype)
        C_f = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(A_s, A_f)
        T.copy(B, B_s)
        T.gemm(A_f, B_s, C_f, transpose_B=True, clear_accum=True, policy=policy)
        T.copy(C_f, C)
