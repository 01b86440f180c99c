#!func main
# error: 8:16: T.copy: shapes differ: source 'A' is (64,) but destination 's' is (32,)
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(1) as bx:
        s = T.alloc_shared((32,), "float32")
        T.copy(A, s)
