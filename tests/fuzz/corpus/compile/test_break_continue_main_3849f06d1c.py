#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            if X[i] > 0:
                break  # ERR:parallel-break
            X[i] = 1.0
