#!func main
# error: 8:50: this layout is not a bijection onto its (8, 8) tile: (0, 1) and (1, 0) both have offset 1
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(1) as bx:
        A_s = T.alloc_shared((8, 8), "float32")
        T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i + j)})
        T.copy(A, A_s)
