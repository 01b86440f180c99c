#!func eager_with_error
#!bind A = tensor(float32, 32)
#!bind T = module(tilec.language)
#!bind block = 16
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
@jit
def eager_with_error(A, block: int = 16):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    B = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        A_s = T.alloc_shared((block,), "float32")
        T.copy(A[bx * block], A_s)
        T.copyy(A_s, B[bx * block])  # ERR:eager-unknown-t-name
    return B


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
