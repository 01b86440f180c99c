#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        f = lambda x: x * 2  # noqa: E731  ERR:lambda
        A[0] = f(A[0])
