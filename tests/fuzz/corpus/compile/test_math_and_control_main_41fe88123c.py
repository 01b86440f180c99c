#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 13
@T.prim_func
def main(C: T.Tensor((2, n), "int32")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            C[0, i] = (i - 6) // 4
            C[1, i] = (i - 6) % 4
