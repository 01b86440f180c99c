#!func main
# error: 10:9: T.gemm: the K dims of A and B differ (16 vs 32)
import tilec.language as T

@T.prim_func
def main(C: T.Tensor((16, 16), "float32")):
    with T.Kernel(1) as bx:
        a = T.alloc_shared((16, 16), "float16")
        b = T.alloc_shared((32, 16), "float16")
        c = T.alloc_fragment((16, 16), "float32")
        T.gemm(a, b, c)
