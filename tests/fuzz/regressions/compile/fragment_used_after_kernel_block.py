#!func main
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        f = T.alloc_fragment((8,), "float32")
        T.fill(f, 0)
    T.copy(f, A)
