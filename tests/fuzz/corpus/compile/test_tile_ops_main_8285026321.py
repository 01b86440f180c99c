#!target hip gfx940
#!func main
#!bind D0 = 3
#!bind D1 = 5
#!bind D2 = 7
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((D0, D1, D2), "float32"), Y: T.Tensor((D0, D1, D2), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i, j, k in T.Parallel(D0, D1, D2):
            Y[i, j, k] = X[i, j, k] + i * 100 + j * 10 + k
