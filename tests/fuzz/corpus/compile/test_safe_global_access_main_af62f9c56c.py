#!func main
#!bind T = module(tilec.language)
#!bind n = sym(n)
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
        for i in T.Parallel(64):
            if bx * 64 + i < n:
                B[bx * 64 + i] = A[bx * 64 + i] + 1
