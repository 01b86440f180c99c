#!func main
# error: 10:16: T.copy: shapes differ: source 'A' is (48,) but destination 's' is (32,)
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(2) as bx:
        s = T.alloc_shared((32,), "float32")
        lo = bx * 8
        hi = lo + 48
        T.copy(A[lo:hi], s)
