#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
#!bind cols = 64
#!bind keys = 200
#!bind rows = 32
#!bind steps = 4
@T.prim_func
def main(X: T.Tensor((keys, cols), "bfloat16"), Index: T.Tensor((steps * rows,), "int32"),
         Y: T.Tensor((rows, cols), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tile = T.alloc_shared((rows, cols), "bfloat16")
        acc = T.alloc_fragment((rows, cols), "float32")
        T.clear(acc)
        for k in T.Pipelined(steps, num_stages=2):
            for i, j in T.Parallel(rows, cols):
                tile[i, j] = T.if_then_else(Index[k * rows + i] >= 0, X[T.max(Index[k * rows + i], 0), j], 0)
            for i, j in T.Parallel(rows, cols):
                acc[i, j] += tile[i, j]
        T.copy(acc, Y)
