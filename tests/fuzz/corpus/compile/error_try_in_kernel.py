#!func main
# error: 7:9: try statement is not supported in kernels
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        try:
            A[0] = 1.0
        except Exception:
            pass
