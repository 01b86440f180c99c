#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1) as _:
        v = T.reshape(A[0], (8, 8))  # ERR:not-a-buffer
        T.copy(v, A)
