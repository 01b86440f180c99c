#!target cuda sm_90a
#!func stage
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def stage(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((128,), "float32")
        f = T.alloc_fragment((128,), "float32")
        T.copy(X, f)
        for i in T.Parallel(128):
            f[i] = f[i] * 2.0
        T.copy(f, s)
        for i in T.Parallel(128):
            Y[i] = s[127 - i]
