#!target hip gfx940
#!func eager_pool_rows
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 12, 5)
#!bind block = 4
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind pool = 2
@jit
def eager_pool_rows(X, pool: int = 2, block: int = 4):
    # As TileLang's convolution and block-sparse GEMM do: dims computed with before the
    # declaration that binds them.
    M, N = T.const("M, N")
    OM = M // pool
    X: T.Tensor((M, N), "float32")
    Y = T.empty((OM, N), "float32")
    with T.Kernel(T.ceildiv(OM, block), threads=32) as bx:
        for i, j in T.Parallel(block, N):
            if bx * block + i < OM:
                Y[bx * block + i, j] = 0.0
                for p in T.serial(pool):
                    Y[bx * block + i, j] = Y[bx * block + i, j] + X[(bx * block + i) * pool + p, j]
    return Y


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
