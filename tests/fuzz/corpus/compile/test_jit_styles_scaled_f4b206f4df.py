#!target hip gfx906
#!func scaled
#!bind T = module(tilec.language)
#!bind n = 40
#!bind scale = 3.0
@T.prim_func
def scaled(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, 16), threads=128) as bx:
        for i in T.Parallel(16):
            if bx * 16 + i < n:
                Y[bx * 16 + i] = X[bx * 16 + i] * scale
