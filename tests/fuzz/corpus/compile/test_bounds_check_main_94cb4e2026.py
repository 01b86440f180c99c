#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 4
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(n):
            B[i + 1] = A[i]  # the last iteration writes B[n]
