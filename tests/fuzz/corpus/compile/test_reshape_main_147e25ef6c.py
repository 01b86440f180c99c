#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1) as _:
        s = T.alloc_shared((64,), "float32")
        v = T.view(s, (8, 8), dtype="float16")  # ERR:another-dtype
        T.copy(A, s)
