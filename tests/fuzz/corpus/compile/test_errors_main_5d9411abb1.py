#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((8, 8), "float32")
        B_f = T.alloc_fragment((4,), "float32")
        T.copy(A, A_f)
        T.reduce_sum(A_f[0:4, 2:6], B_f, dim=1)  # ERR:reduce-rows
        T.copy(B_f, B)
