#!func copy
#!bind T = module(tilec.language)
#!bind dtype = float32
@T.prim_func
def copy(A: T.Tensor((8,), dtype), B: T.Tensor((8,), dtype)):
    with T.Kernel(1, threads=8) as bx:
        for i in T.Parallel(8):
            B[i] = A[i]
