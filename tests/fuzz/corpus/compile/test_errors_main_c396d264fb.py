#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(4):
            i = 2  # ERR:assign-loop-variable
            A[i] = 1.0
