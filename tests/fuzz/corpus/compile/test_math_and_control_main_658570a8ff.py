#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 40
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
         I: T.Tensor((n,), "int32"), J: T.Tensor((n,), "int32"),
         C: T.Tensor((2, n), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            C[0, i] = A[i] / B[i]
            C[1, i] = I[i] / J[i]
