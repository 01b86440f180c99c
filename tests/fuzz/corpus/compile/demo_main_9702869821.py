#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((1,), "float32")):
    with T.Kernel(1) as bx:
        A[0] = 1.0
