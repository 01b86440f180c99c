#!func main
# error: 8:9: T.gemm() missing required argument 'C'
import tilec.language as T

@T.prim_func
def main(C: T.Tensor((16, 16), "float32")):
    with T.Kernel(1) as bx:
        a = T.alloc_shared((16, 16), "float16")
        T.gemm(a, a)
