#!target cuda sm_90a
#!func main
#!bind M = 256
#!bind N = 128
#!bind T = module(tilec.language)
#!bind bM = 64
@T.prim_func
def main(X: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(M, bM), threads=128) as bx:
        X_f = T.alloc_fragment((bM, N), "float32")
        X_s = T.alloc_shared((bM, N), "float32")
        T.copy(X[bx * bM, 0], X_f)
        for i, j in T.Parallel(bM, N):
            X_f[i, j] *= 2
        T.copy(X_f, X_s)
        T.atomic_add(C[bx * bM:(bx + 1) * bM, 0:N], X_s)
