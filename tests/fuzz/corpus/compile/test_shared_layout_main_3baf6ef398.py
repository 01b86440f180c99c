#!func main
#!bind T = module(tilec.language)
#!bind error = "outside"
@T.prim_func
def main(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(2, threads=32) as bx:
        A_s = T.alloc_shared((8, 8), "float32")
        A_f = T.alloc_fragment((8, 8), "float32")
        if error == "bijection":
            T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i + j)})  # ERR:bijection
        elif error == "outside":
            T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i * 9 + j)})  # ERR:outside
        elif error == "runtime":
            T.annotate_layout({A_s: T.Layout((8, 8), lambda i, j: i * 8 + (j ^ bx))})  # ERR:runtime
        elif error == "fragment":
            T.annotate_layout({A_f: T.Layout((8, 8), lambda i, j: i * 8 + j)})  # ERR:fragment
        elif error == "shape":
            T.annotate_layout({A_s: T.Layout((4, 16), lambda i, j: i * 16 + j)})  # ERR:shape
        else:
            T.annotate_layout({A_s: 3})  # ERR:value
        T.copy(A, A_s)
        T.copy(A_s, A_f)
