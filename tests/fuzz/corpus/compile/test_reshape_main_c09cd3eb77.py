#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    v = T.reshape(A, (8, 8))  # ERR:outside-kernel
    with T.Kernel(1) as _:
        v[0, 0] = 1.0
