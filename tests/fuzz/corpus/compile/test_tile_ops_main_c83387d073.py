#!target hip gfx906
#!func main
#!bind M = 20
#!bind N = 13
#!bind T = module(tilec.language)
#!bind c0 = 0
#!bind r0 = 0
#!bind tile = 32
@T.prim_func
def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((tile, tile), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((tile, tile), "float32")
        T.copy(A[r0, c0], A_s)
        T.copy(A_s, O)
