#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind D = 1024
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((4, D), "float32"), Y: T.Tensor((4, D), "float32")):
    with T.Kernel(4, threads=128) as bx:
        x = T.alloc_fragment((1, D), "float32")
        total = T.alloc_fragment((1,), "float32")
        for i, j in T.Parallel(1, D):
            v = X[bx, j] * 2.0
            x[i, j] = v
        T.reduce_sum(x, total, dim=1)
        for i, j in T.Parallel(1, D):
            v = x[i, j] - total[0] / D
            Y[bx, j] = v
