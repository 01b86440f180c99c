#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        for c in (1, 2):
            if X[tx] > c:
                break  # ERR:compile-time-break
            X[tx] = c
