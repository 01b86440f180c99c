#!target cuda sm_90a
#!func two_tiles
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def two_tiles(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((64,), "float32")
        t = T.alloc_shared((64,), "float32")
        T.copy(X, s)
        T.copy(X, t)
        for i in T.Parallel(64):
            Y[i] = s[63 - i] + t[i]
