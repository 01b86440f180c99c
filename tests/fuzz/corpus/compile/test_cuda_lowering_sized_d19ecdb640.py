#!target cuda sm_90a
#!func sized
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind m = sym(m)
@T.prim_func
def sized(A: T.Tensor((m,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((m,), "float32")
        T.copy(A, s)
        T.copy(s, A)
