#!target cuda sm_90a
#!func reverse_halves
#!config tilec.bounds_check=true
#!bind T = module(tilec.language)
@T.prim_func
def reverse_halves(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        s = T.alloc_shared((128,), "float32")
        for i in T.Parallel(128):
            s[i] = A[bx * 128 + i]
        for i in T.Parallel(128):
            B[bx * 128 + i] = s[127 - i]  # shared, read by another thread
