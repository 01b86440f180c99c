#!func main
# error: 7:9: unknown primitive 'T.copyy'
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1) as bx:
        T.copyy(A, B)
