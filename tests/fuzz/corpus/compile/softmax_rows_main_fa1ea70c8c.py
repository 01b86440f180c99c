#!target hip gfx906
#!func main
#!bind M = sym(M)
#!bind N = 64
#!bind T = module(tilec.language)
#!bind block_M = 4
#!bind dtype = "float32"
@T.prim_func
def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, N), dtype)
        row_max = T.alloc_fragment((block_M,), dtype)
        row_sum = T.alloc_fragment((block_M,), dtype)
        T.copy(X[bx * block_M, 0], x)
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(block_M, N):
            x[i, j] = T.exp(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1)
        for i, j in T.Parallel(block_M, N):
            x[i, j] = x[i, j] / row_sum[i]
        T.copy(x, Y[bx * block_M, 0])
