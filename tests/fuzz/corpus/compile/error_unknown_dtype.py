#!func main
# error: 7:35: unknown dtype 'floatx' for T.alloc_shared dtype
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        s = T.alloc_shared((32,), "floatx")
