#!target cuda sm_90a
#!func main
#!bind M = 512
#!bind N = 64
#!bind T = module(tilec.language)
#!bind bM = 64
@T.prim_func
def main(X: T.Tensor((M, N), "float32"), W: T.Tensor((M // bM, N), "float32"),
         O: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X_s = T.alloc_shared((bM, N), "float32")
        W_s = T.alloc_shared((1, N), "float32")
        for k in T.Pipelined(M // bM, num_stages=2):
            T.copy(X[k * bM, 0], X_s)
            T.copy(W[k:k + 1, 0:N], W_s)
            for i, j in T.Parallel(bM, N):
                O[k * bM + i, j] = X_s[i, j] * W_s[0, j]
