#!target hip gfx90a
#!func main
# A store before the T.Kernel block: on a GPU target it would run on no thread.
import tilec.language as T


@T.prim_func
def main(X: T.Tensor((8,), "float32")):
    X[0] = 1.0
    with T.Kernel(1) as bx:
        X[1] = 2.0
