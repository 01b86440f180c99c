#!target hip gfx90a
#!func main
#!bind M = 10
#!bind N = 20
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.copy(A[0:M, 8:16], B[0:M, 0:8])
