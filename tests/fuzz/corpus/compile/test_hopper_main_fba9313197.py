#!target cuda sm_90a
#!func main
#!bind M = 512
#!bind N = 128
#!bind T = module(tilec.language)
#!bind bM = 64
#!bind handoff = True
@T.prim_func
def main(X: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X_f = T.alloc_fragment((bM, N), "float32")
        X_s = T.alloc_shared((bM, N), "float32")
        if handoff:
            L_s = T.alloc_shared((bM, N), "float32")
        for k in T.serial(M // bM):
            rows = k * bM
            if handoff:
                T.copy(X[rows, 0], L_s)
                T.copy(L_s, X_f)
            else:
                T.copy(X[rows, 0], X_f)
            for i, j in T.Parallel(bM, N):
                X_f[i, j] *= k + 1
            T.copy(X_f, X_s)
            T.atomic_add(C[rows:rows + bM, 0:N], X_s)
