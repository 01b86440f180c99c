#!func main
#!bind T = module(tilec.language)
#!bind n = 32
@T.prim_func
def main(A: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        scratch = T.alloc_global((n,), "float32")  # ERR:alloc-global-inside
        for i in T.Parallel(n):
            scratch[i] = A[i]
