#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((8, 8), "float32")
        B_f = T.alloc_fragment((8,), "float32")
        T.copy(A, A_f)
        T.reduce_sum(A_f, B_f, dim=2)  # ERR:reduce-dim
        T.copy(B_f, B)
