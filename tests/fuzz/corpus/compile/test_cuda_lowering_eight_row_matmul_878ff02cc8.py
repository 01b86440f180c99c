#!target cuda sm_90a
#!func eight_row_matmul
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def eight_row_matmul(A: T.Tensor((8, 32), "float16"), B: T.Tensor((32, 64), "float16"),
                     C: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((8, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_f = T.alloc_fragment((8, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f, clear_accum=True)
        T.copy(C_f, C)
