#!target hip gfx940
#!func row_sums_eager
#!bind T = module(tilec.language)
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
#!bind mat = tensor(float32, 1, 3)
@jit(out_idx=[-1])
def row_sums_eager(mat):
    rows, cols = T.dynamic("rows cols")  # spaces separate the names too
    mat: T.Tensor((rows, cols), "float32")
    out = T.empty((rows,), "float32")
    with T.Kernel(rows, threads=32) as r:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for c in T.serial(cols):
            acc[0] += mat[r, c]
        out[r] = acc[0]
    return out


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
