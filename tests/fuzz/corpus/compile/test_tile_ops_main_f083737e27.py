#!target hip gfx940
#!func main
#!bind K = 32
#!bind N = 32
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N, K), "float32"), x: T.Tensor((K,), "float32"),
         y0: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((N, K), "float32")
        x_f = T.alloc_fragment((K,), "float32")
        y_f = T.alloc_fragment((N,), "float32")
        T.copy(A, A_f)
        T.copy(x, x_f)
        T.copy(y0, y_f)
        T.gemv(A_f, x_f, y_f)
        T.copy(y_f, y)
