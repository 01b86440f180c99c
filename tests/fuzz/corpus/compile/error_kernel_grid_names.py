#!func main
# error: 6:28: T.Kernel has 2 grid dims but 3 block indices are named
import tilec.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, 2) as (bx, by, bz):
        pass
