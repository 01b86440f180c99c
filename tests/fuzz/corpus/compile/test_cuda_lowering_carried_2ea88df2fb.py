#!target cuda sm_90a
#!func carried
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def carried(X: T.Tensor((256,), "float32"), Y: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((256,), "float32")
        T.copy(X, x)
        v = 0.0
        for i in T.Parallel(256):
            v = x[i] * 2.0
            Y[i] = v
