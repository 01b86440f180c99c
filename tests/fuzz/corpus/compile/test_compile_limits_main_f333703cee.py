#!func main
#!bind T = module(tilec.language)
#!bind n = sym(n)
@T.prim_func
def main(A: T.Tensor((8,), "int64")):
    with T.Kernel(1) as bx:
        A[0] = n  # ERR:symbolic-without-tensor
