#!func main
# error: 8:26: index 2147483648 into 'S' does not fit in int32, which tile operands are indexed in
import tilec.language as T

@T.prim_func
def main(X: T.Tensor((256,), "float32"), S: T.Tensor((1,), "float32")):
    with T.Kernel(16, threads=128) as bx:
        for i in T.serial(16):
            T.atomic_add(S[2147483648], X[bx * 16 + i])
