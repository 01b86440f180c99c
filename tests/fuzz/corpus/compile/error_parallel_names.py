#!func main
# error: 7:13: T.Parallel gives 2 loop variables but 1 is named
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(1) as bx:
        for i in T.Parallel(8, 8):
            A[i, 0] = 1.0
