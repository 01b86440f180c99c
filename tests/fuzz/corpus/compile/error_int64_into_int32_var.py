#!func main
# error: 9:13: 'acc' holds int32 values (from its first assignment) and cannot take the int64 value assigned here, which may not fit; give it int64 where it is first assigned (e.g. acc = T.int64(0))
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "int64"), B: T.Tensor((1,), "int64")):
    with T.Kernel(1) as bx:
        acc = 0
        for i in T.serial(8):
            acc = acc + A[i]
        B[0] = acc
