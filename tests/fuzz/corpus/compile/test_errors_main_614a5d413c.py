#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((32,), "floatx")  # ERR:unknown-dtype
        T.copy(A, A_s)
