#!target hip gfx906
#!func eager_scaled
#!bind A = tensor(float32, 70)
#!bind T = module(tilec.language)
#!bind block = 32
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind math = opaque(module)
@jit
def eager_scaled(A, block=32):
    n = T.const("n")
    A: T.Tensor((n,), "float32")
    B = T.empty((n,), "float32")
    with T.Kernel(math.ceil(n / block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                B[bx * block + i] = A[bx * block + i] * math.log2(block)
    return B


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
