#!func main
#!bind T = module(tilec.language)
#!bind n = 4
#!bind threads = 128
@T.prim_func
def main(X: T.Tensor((n, threads), "float32"), Y: T.Tensor((n, threads), "float32")):
    with T.Kernel(n, threads=threads) as bx:
        tx = T.get_thread_binding()
        Y[bx, tx] = X[bx, tx] * 2
        T.sync_grid()
        v = Y[(bx + 1) % n, tx]
        T.sync_grid()
        Y[bx, tx] = v + 1
