#!func eager_plus_one
#!bind A = tensor(int32, 8)
#!bind B = tensor(int32, 8)
#!bind T = module(tilec.language)
#!bind dtype = int32
#!bind tilec = module(tilec)
@tilec.jit(target="cpu")
def eager_plus_one(A, B, dtype="float32"):
    M = T.const("M")
    A: T.Tensor[(M,), dtype]
    B: T.Tensor[(M,), dtype]
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(M):
            B[i] = A[i] + T.cast(1, dtype)
