#!func main
#!bind M = 32
#!bind T = module(tilec.language)
#!bind accum_dtype = float64
#!bind dtype = float32
@T.prim_func
def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
    with T.Kernel(1, threads=32) as bx:
        staged = T.alloc_shared((M,), dtype)
        acc = T.alloc_fragment((M,), accum_dtype)
        T.copy(A, staged)
        for i in T.Parallel(M):
            acc[i] = T.cast(staged[i], accum_dtype) * 2
        for i in T.Parallel(M):
            B[i] = T.cast(acc[i], dtype)
