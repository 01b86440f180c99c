#!func scaled
#!bind N = 4096
#!bind T = module(tilec.language)
#!bind block = 64
@T.prim_func
def scaled(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), s: T.float32):
    with T.Kernel(T.ceildiv(N, block)) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * s
