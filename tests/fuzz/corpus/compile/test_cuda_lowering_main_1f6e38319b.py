#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind cols = 128
#!bind keys = 200
#!bind rows = 64
#!bind threads = 128
@T.prim_func
def main(X: T.Tensor((keys, cols), "bfloat16"), Index: T.Tensor((rows,), "int32"),
         Y: T.Tensor((rows, cols), "bfloat16")):
    with T.Kernel(1, threads=threads) as bx:
        index = T.alloc_shared((rows,), "int32")
        tile = T.alloc_shared((rows, cols), "bfloat16")
        for i in T.Parallel(rows):
            index[i] = Index[i]
        for i, j in T.Parallel(rows, cols):
            tile[i, j] = T.if_then_else(index[i] >= 0, X[T.max(index[i], 0), j], 0)
        T.copy(tile, Y)
