#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((16, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        flat = T.Tensor((64,), "float32", A.data)  # ERR:view-size
        flat[0] = 1.0
