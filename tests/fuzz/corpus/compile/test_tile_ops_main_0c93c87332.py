#!target hip gfx940
#!func main
#!bind G = 16
#!bind M = 128
#!bind N = 128
#!bind T = module(tilec.language)
#!bind block_M = 64
@T.prim_func
def main(X: T.Tensor((G, M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(G, T.ceildiv(M, block_M), threads=128) as (g, r):
        X_s = T.alloc_shared((block_M, N), "float32")
        T.copy(X[g, r * block_M, 0], X_s)
        T.atomic_add(C[r * block_M:(r + 1) * block_M, 0:N], X_s)
