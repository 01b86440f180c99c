#!target cuda sm_90a
#!func cached_twice
#!bind T = module(tilec.language)
@T.prim_func
def cached_twice(A: T.Tensor((64,), "float32")):  # a kernel no other test builds
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            A[i] = A[i] + 1.0
