#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind scale_rows = func(scale_rows)
@T.prim_func
def main(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32")):
    with T.Kernel(1) as bx:
        a = T.alloc_fragment((4, 8), "float32")
        T.copy(A, a)
        scale_rows(a, 3.0)
        T.copy(a, B)


@T.prim_func
def scale_rows(A: T.Tensor((4, 8), "float32"), factor: T.float32):
    for i, j in T.Parallel(4, 8):
        A[i, j] = A[i, j] * factor
