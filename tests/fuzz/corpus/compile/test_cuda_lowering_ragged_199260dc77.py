#!target cuda sm_90a
#!func ragged
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def ragged(A: T.Tensor((100,), "float32")):
    with T.Kernel(1, threads=100) as bx:
        for i in T.Parallel(100):
            A[i] = 1.0
