#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((16, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        flat = T.Tensor((128,), "int32", A.data)  # ERR:view-dtype
        flat[0] = 1
