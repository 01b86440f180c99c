#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        try:  # ERR:try
            A[0] = 1.0
        except Exception:
            A[0] = 2.0
