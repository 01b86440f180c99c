#!func eager_segment_scale
#!bind T = module(tilec.language)
#!bind X = tensor(float32, 4)
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind scales = (0.5)
#!bind sizes = (4)
@jit
def eager_segment_scale(X, sizes=(2, 3, 1), scales=(1.0, -2.0, 3.0)):
    # Python's builtins over compile-time values, in the body and in the kernel.
    total = sum(sizes)
    X: T.Tensor((total,), "float32")
    Y = T.empty((total,), "float32")
    with T.Kernel(1, threads=32) as bx:
        for i, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
            start = sum(sizes[:i])
            for j in T.serial(size):
                Y[start + j] = X[start + j] * (scale if all(sizes) and not any(()) else 0.0)
    return Y


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
