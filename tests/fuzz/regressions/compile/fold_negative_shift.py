#!func main
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "int64")):
    with T.Kernel(1) as bx:
        A[0] = 1 << -1
