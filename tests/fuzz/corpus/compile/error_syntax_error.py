#!func main
# error: 7:29: expected ':' after 'for' iterable
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        for i in T.serial(8)
            A[i] = 1.0
