#!target hip gfx906
#!func main
#!bind K = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind block_K = 16
#!bind block_N = 32
@T.prim_func
def main(A: T.Tensor((N, K), "float32"), x: T.Tensor((K,), "float32"),
         y0: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
        A_s = T.alloc_shared((block_N, block_K), "float32")
        x_s = T.alloc_shared((block_K,), "float32")
        y_f = T.alloc_fragment((block_N,), "float32")
        T.copy(y0[bx * block_N], y_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[bx * block_N, k * block_K], A_s)
            T.copy(x[k * block_K], x_s)
            T.gemv(A_s, x_s, y_f, accumulate=True)
        T.copy(y_f, y[bx * block_N])
