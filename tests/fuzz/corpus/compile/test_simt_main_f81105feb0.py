#!func main
#!bind T = module(tilec.language)
#!bind n = 256
@T.prim_func
def main(X: T.Tensor((n,), "int32"), Before: T.Tensor((n,), "int32"), Total: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):
            Before[i] = T.atomic_add(Total[0], X[i], return_prev=True)  # ERR:parallel-return-prev
