#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        X[0] = T.get_thread_binding(3)  # ERR:thread-dim
