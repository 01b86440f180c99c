#!func main
# error: 9:13: 'acc' holds int32 values (from its first assignment) and cannot take a float32 value; give it a float type where it is first assigned (e.g. acc = T.float32(0))
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32"), B: T.Tensor((1,), "float32")):
    with T.Kernel(1) as bx:
        acc = 0
        for i in T.serial(8):
            acc = acc + A[i]
        B[0] = acc
