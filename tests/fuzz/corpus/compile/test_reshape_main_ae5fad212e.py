#!func main
#!bind N = sym(N)
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((N,), "float32")):
    with T.Kernel(1) as _:
        v = T.reshape(A, (8, 8))  # ERR:symbolic-buffer
        v[0, 0] = 1.0
