#!target cuda sm_90a
#!func huge
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def huge(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((64 * 1024,), "float32")
        T.copy(A, s[0:128])
        T.copy(s[0:128], A)
