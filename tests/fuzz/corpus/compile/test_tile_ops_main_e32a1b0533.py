#!func main
#!bind T = module(tilec.language)
#!bind body = 1
@T.prim_func
def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8, 8), "float32")):
    with T.Kernel(1) as bx:
        if body == 0:
            T.atomic_addx4(A[0, 0:3], B[0, 0])
        elif body == 1:
            T.atomic_addx2(A[0, 0], B[0, 0], return_prev=True)
        else:
            T.atomic_addx4(A[0, 0], 1.0)
