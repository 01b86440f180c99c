#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1) as _:
        s = T.alloc_shared((64,), "float32")
        v = T.reshape(s, (8, 9))  # ERR:another-count
        T.copy(A, v[0, 0:8])
