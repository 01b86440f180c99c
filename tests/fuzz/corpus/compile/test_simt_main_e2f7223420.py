#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding()
        if tx < 16:
            X[tx] = 1
            T.sync_threads()  # ERR:divergent-barrier
