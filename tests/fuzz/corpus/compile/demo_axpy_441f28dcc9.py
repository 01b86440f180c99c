#!target hip gfx90a
#!func axpy
#!bind N = 1000
#!bind T = module(tilec.language)
#!bind alpha = 2.0
#!bind block = 256
#!bind tilec = module(tilec)
@tilec.jit
def axpy(X, Y, alpha=2.0, block=256):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y: T.Tensor((N,), "float32")
    Z = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]
    return Z
