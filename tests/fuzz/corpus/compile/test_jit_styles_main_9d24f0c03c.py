#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = 24
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):
            B[i] = A[i] * 2
