#!target cuda sm_90a
#!func first
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def first(A: T.Tensor((32, 32), "bfloat16"), out: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((32, 32), "bfloat16")
        acc = T.alloc_fragment((32, 32), "float32")
        T.copy(A, A_s)
        T.gemm(A_s, A_s, acc, clear_accum=True)
        out[0] = acc[0, 0]
