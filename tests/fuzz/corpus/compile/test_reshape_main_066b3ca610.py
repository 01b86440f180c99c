#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1) as _:
        s = T.alloc_shared((64,), "float32")
        v = T.reshape(s, (8, 8))
        T.annotate_layout({v: T.Layout((8, 8), lambda i, j: j * 8 + i)})  # ERR:layout-of-view
        T.copy(A, s)
