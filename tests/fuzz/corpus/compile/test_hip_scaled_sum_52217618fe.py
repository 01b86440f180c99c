#!target hip
#!func scaled_sum
#!bind T = module(tilec.language)
@T.prim_func
def scaled_sum(A: T.Tensor((4, 256), "float16"), S: T.Tensor((4,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        A_f = T.alloc_fragment((2, 256), "float32")
        S_f = T.alloc_fragment((2,), "float32")
        T.copy(A[bx * 2, 0], A_f)
        for i, j in T.Parallel(2, 256):
            A_f[i, j] = A_f[i, j] * 0.5
        T.reduce_sum(A_f, S_f, dim=1)
        T.copy(S_f, S[bx * 2])
