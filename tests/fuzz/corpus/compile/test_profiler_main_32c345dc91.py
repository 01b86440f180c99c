#!func main
#!bind T = module(tilec.language)
#!bind dtype = "float32"
#!bind n = sym(n)
@T.prim_func
def main(X: T.Tensor((n, 8), dtype), Y: T.Tensor((n, 8), dtype)):
    with T.Kernel(n, threads=8) as bx:
        for j in T.Parallel(8):
            Y[bx, j] = X[bx, j] * 2
