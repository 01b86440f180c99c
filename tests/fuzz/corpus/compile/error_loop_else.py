#!func main
# error: 9:9: 'else' after a 'for' loop is not supported in kernels
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        for i in T.serial(8):
            A[i] = 1.0
        else:
            A[0] = 2.0
