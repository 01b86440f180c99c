#!target hip gfx90a
#!func main
#!bind G = 16
#!bind M = 8
#!bind N = 16
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((G, M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(G, threads=128) as g:
        X_f = T.alloc_fragment((M, N), "float32")
        T.copy(X[g, 0, 0], X_f)
        T.atomic_add(C[0:M, 0:N], X_f)
