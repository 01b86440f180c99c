#!func main
#!bind G = 33
#!bind M = 5
#!bind N = 7
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((G, M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(G, threads=128) as g:
        X_f = T.alloc_fragment((M, N), "float32")
        T.copy(X[g, 0, 0], X_f)
        T.atomic_add(C[0:M, 0:N], X_f)
