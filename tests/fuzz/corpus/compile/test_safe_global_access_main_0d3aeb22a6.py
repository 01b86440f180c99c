#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64, 32), "float32"), B: T.Tensor((64, 32), "float32")):
    with T.Kernel(4, threads=128) as bx:
        for i, j in T.Parallel(16, 32):
            B[bx * 16 + i, j] = A[bx * 16 + i, j] * 2
