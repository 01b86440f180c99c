#!target cuda sm_80
#!func eager_transposed_scale
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 10, 6)
#!bind blk = 4
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
@jit
def eager_transposed_scale(X, blk: int = 4):
    N, M = T.const("N, M")
    X: T.Tensor((N, M), "float32")
    Y = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(N, blk), threads=32) as bx:
        T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [j, i])})  # X arrives column-major
        for i, j in T.Parallel(blk, M):
            if bx * blk + i < N:
                Y[j, bx * blk + i] = X[bx * blk + i, j] * 2.0
    return Y


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
