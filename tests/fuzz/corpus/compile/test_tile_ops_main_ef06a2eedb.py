#!target hip gfx940
#!func main
#!bind G = 5
#!bind M = 4
#!bind N = 24
#!bind T = module(tilec.language)
@T.prim_func
def main(X: T.Tensor((G, M, N), "float32"), Y: T.Tensor((G, M, N), "float32"),
         R: T.Tensor((G, N), "float32")):
    with T.Kernel(G, threads=128) as g:
        X_f = T.alloc_fragment((M, N), "float32")
        row_s = T.alloc_shared((N,), "float32")
        # The point index takes the other operand's shape, right-aligned:
        # X[g, 0, 0] -> X[g, 0:M, 0:N] and X[g, 2, 0] -> X[g, 2, 0:N].
        T.copy(X[g, 0, 0], X_f)
        T.copy(X_f, Y[g, 0, 0])
        T.copy(X[g, 2, 0], row_s)
        T.copy(row_s, R[g, 0])
