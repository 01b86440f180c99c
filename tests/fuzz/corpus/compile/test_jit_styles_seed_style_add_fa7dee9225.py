#!target hip gfx90a
#!func seed_style_add
#!bind M = 40
#!bind N = 24
#!bind T = module(tilec.language)
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
@jit
def seed_style_add(M, N):
    A = T.Tensor[(M, N), "float32"]
    B = T.Tensor[(M, N), "float32"]
    C = T.Tensor[(M, N), "float32"]

    with T.Kernel(T.ceildiv(M, 16), T.ceildiv(N, 16)) as (bx, by):
        A_s = T.alloc_shared((16, 16), "float32")
        B_f = T.alloc_fragment((16, 16), "float32")
        T.copy(A[bx * 16, by * 16], A_s)
        T.copy(B[bx * 16, by * 16], B_f)
        for i, j in T.Parallel(16, 16):
            B_f[i, j] = B_f[i, j] - A_s[i, j] * 2
        T.copy(B_f, C[bx * 16, by * 16])


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
