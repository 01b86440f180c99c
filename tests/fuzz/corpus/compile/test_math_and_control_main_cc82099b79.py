#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 300
@T.prim_func
def main(A: T.Tensor((n,), "float32"), K: T.Tensor((n,), "int32"),
         C: T.Tensor((n,), "float32"), F: T.Tensor((7, n), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            x = A[i]
            k = K[i]
            C[i] = T.if_then_else(x > 0, x, x * 0.125)
            F[0, i] = T.if_then_else(x > 0, 1, 0)
            F[1, i] = T.if_then_else(x >= 0.5, 1, 0)
            F[2, i] = T.if_then_else(x < -0.5 or x > 0.875, 1, 0)
            F[3, i] = T.if_then_else(not (x <= 0.25), 1, 0)
            F[4, i] = T.if_then_else(k == 0 and x < 0, 1, 0)
            F[5, i] = T.if_then_else(k != 1, 1, 0)
            F[6, i] = T.if_then_else(k <= -1 or (k > 1 and not x > 0), 1, 0)
