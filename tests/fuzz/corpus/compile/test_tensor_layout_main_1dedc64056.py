#!target hip gfx906
#!func main
#!bind D = 4
#!bind L = 8
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((L, D), "float32"), B: T.Tensor((L, D), "float32")):
    W = T.alloc_global((L, D), "float32")
    with T.Kernel(1, threads=32) as bx:
        T.annotate_layout({W: T.Layout(W.shape, lambda i, j: [j, i])})
        for i, j in T.Parallel(L, D):
            W[i, j] = A[i, j] + 1.0
    with T.Kernel(1, threads=32) as bx:
        T.annotate_layout({W: T.Layout(W.shape, lambda i, j: [j, i])})
        for i, j in T.Parallel(L, D):
            B[i, j] = W[i, j] * 2.0
