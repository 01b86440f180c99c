#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = 200
@T.prim_func
def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            x = A[i]
            if x < -0.5:
                C[i] = x * 2
            elif x < 0.25:
                C[i] = 0.5
            elif x < 0.75:
                C[i] = -x
            else:
                C[i] = x + 1
