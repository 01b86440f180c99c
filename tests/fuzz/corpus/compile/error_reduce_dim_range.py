#!func main
# error: 9:28: T.reduce_sum: dim 2 is out of range for the 2-D buffer 'f'
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(1) as bx:
        f = T.alloc_fragment((8, 8), "float32")
        r = T.alloc_fragment((8,), "float32")
        T.reduce_sum(f, r, dim=2)
