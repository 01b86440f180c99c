#!func bad
#!bind T = module(tilec.language)
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind x = tensor(float32, 2, 2)
@jit
def bad(x):
    rows, cols = T.dynamic("rows, 1cols")
    x: T.Tensor((rows, cols), "float32")
    with T.Kernel(1) as bx:
        x[0, 0] = 1.0


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
