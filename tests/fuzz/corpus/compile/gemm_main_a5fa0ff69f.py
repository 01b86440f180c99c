#!func main
#!bind FP8_BLOCK = 128
#!bind K = 128
#!bind M = 128
#!bind N = 128
#!bind T = module(tilec.language)
#!bind block_K = 128
#!bind block_M = 128
#!bind block_N = 128
#!bind k_blocks = 1
#!bind num_stages = 3
#!bind threads = 256
@T.prim_func
def main(A: T.Tensor((M, K), "float8_e4m3"), A_scale: T.Tensor((M, k_blocks), "float32"),
         B: T.Tensor((N, K), "float8_e4m3"), B_scale: T.Tensor((T.ceildiv(N, FP8_BLOCK), k_blocks), "float32"),
         C: T.Tensor((M, N), "bfloat16")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), "float8_e4m3")
        B_shared = T.alloc_shared((block_N, block_K), "float8_e4m3")
        partial = T.alloc_fragment((block_M, block_N), "float32")
        acc = T.alloc_fragment((block_M, block_N), "float32")
        T.clear(acc)
        for k in T.Pipelined(k_blocks, num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.gemm(A_shared, B_shared, partial, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M:
                    acc[i, j] = acc[i, j] + partial[i, j] * A_scale[by * block_M + i, k] * B_scale[bx, k]
        T.copy(acc, C[by * block_M, bx * block_N])
