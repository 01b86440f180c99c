#!target hip gfx906
#!func eager_matmul
#!bind A = tensor(float32, 64, 32)
#!bind B = tensor(float32, 32, 64)
#!bind T = module(tilec.language)
#!bind block_M = 16
#!bind jit = func(jit)
#!bind TARGET = "cpu"
#!bind _TestJitFunction = opaque(type)
@jit
def eager_matmul(A, B, block_M: int = 32):
    M, K = T.const("M, K")
    N = T.const("N")
    A: T.Tensor((M, K), "float32")
    B: T.Tensor((K, N), "float32")
    C = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, 32), "float32")
        B_s = T.alloc_shared((32, 32), "float32")
        C_f = T.alloc_fragment((block_M, 32), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[by * block_M, k * 32], A_s)
            T.copy(B[k * 32, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * 32])
    return C


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)
