#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "int16")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(8):
            Y[i] = T.reinterpret(X[i], "int16")  # ERR:reinterpret-size
