#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 64
@T.prim_func
def main(A: T.Tensor((n,), "float32"), M: T.Tensor((n,), "bool"),
         P: T.Tensor((n,), "bool"), C: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            P[i] = A[i] > 0
            C[i] = T.if_then_else(M[i], A[i], -A[i])
