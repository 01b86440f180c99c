#!func main
# error: 7:13: lambda is not supported in kernels
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        f = lambda x: x
