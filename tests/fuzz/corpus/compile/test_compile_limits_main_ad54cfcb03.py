#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind levels = 1990
@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        t = (A[1],)
        for _ in (0,) * levels:
            t = (t[0] * A[2],)  # ERR:deep-expression
        A[0] = t[0]
