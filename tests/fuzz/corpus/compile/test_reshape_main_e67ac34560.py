#!func main
#!bind N = sym(N)
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N,), "float32")):
    with T.Kernel(1) as _:
        s = T.alloc_shared((64,), "float32")
        v = T.reshape(s, (N, 8))  # ERR:symbolic-shape
        v[0, 0] = A[0]
