#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind q = -4
#!bind r = 3
@T.prim_func
def main(C: T.Tensor((6,), "int32"), F: T.Tensor((2,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        C[0] = -7 // 2
        C[1] = -7 % 3
        C[2] = 7 % -3
        C[3] = 7 // -2
        C[4] = q
        C[5] = r
        F[0] = 7 / 2
        F[1] = -7 / 2
