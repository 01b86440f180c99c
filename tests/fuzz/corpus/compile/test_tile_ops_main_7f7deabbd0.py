#!target hip gfx940
#!func main
#!bind M = 20
#!bind N = 13
#!bind T = module(tilec.language)
#!bind c0 = 0
#!bind r0 = 0
#!bind tile = 32
@T.prim_func
def main(X: T.Tensor((tile, tile), "float32"), B: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X_s = T.alloc_shared((tile, tile), "float32")
        T.copy(X, X_s)
        T.copy(X_s, B[r0, c0])
