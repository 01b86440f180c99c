#!target hip gfx940
#!func main
#!bind C = 16
#!bind D = 1
#!bind F = 64
#!bind H = 8
#!bind K = 3
#!bind N = 2
#!bind OH = 8
#!bind OW = 8
#!bind P = 1
#!bind S = 1
#!bind T = module(tilec.language)
#!bind W = 8
#!bind block_K = 32
#!bind block_M = 64
#!bind block_N = 64
#!bind dtype = "float32"
@T.prim_func
def main(data: T.Tensor((N, H, W, C), dtype), kernel: T.Tensor((K, K, C, F), dtype),
         out: T.Tensor((N, OH, OW, F), dtype)):
    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
        data_shared = T.alloc_shared((block_M, block_K), dtype)
        kernel_shared = T.alloc_shared((block_K, block_N), dtype)
        out_local = T.alloc_fragment((block_M, block_N), "float32")
        kernel_flat = T.Tensor((K * K * C, F), dtype, kernel.data)
        out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)
        T.clear(out_local)
        for k_iter in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=2):
            T.im2col(data, data_shared, by, k_iter, K, S, D, P)
            T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
            T.gemm(data_shared, kernel_shared, out_local)
        T.copy(out_local, out_flat[by * block_M, bx * block_N])
