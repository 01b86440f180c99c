#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((4, 4), "int32")):
    with T.Kernel(2) as b:
        for i in T.Persistent([4, 4], 2, b):
            A[i, 0] = 1
