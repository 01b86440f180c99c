#!func main
# error: 10:16: 'x' is assigned inside a block at line 9 and is not visible here; assign it before that block (or make it a buffer with T.alloc_local)
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        for i in T.serial(8):
            if A[i] > 0:
                x = A[i] * 2
        A[0] = x
