#!target hip gfx940
#!func main
#!bind M = 48
#!bind N = 61
#!bind T = module(tilec.language)
#!bind clear = True
#!bind dim = 0
#!bind kind = "sum"
#!bind out_shape = (61)
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), D0: T.Tensor(out_shape, "float32"),
         D: T.Tensor(out_shape, "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((M, N), "float32")
        D_f = T.alloc_fragment(out_shape, "float32")
        T.copy(A, A_f)
        T.copy(D0, D_f)
        if kind == "sum":
            T.reduce_sum(A_f, D_f, dim=dim, clear=clear)
        elif kind == "max":
            T.reduce_max(A_f, D_f, dim=dim, clear=clear)
        elif kind == "min":
            T.reduce_min(A_f, D_f, dim=dim, clear=clear)
        elif kind == "abssum":
            T.reduce_abssum(A_f, D_f, dim=dim, clear=clear)
        else:
            T.reduce_absmax(A_f, D_f, dim=dim, clear=clear)
        T.copy(D_f, D)
