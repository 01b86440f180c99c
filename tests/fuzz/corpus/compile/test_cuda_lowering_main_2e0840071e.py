#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind M = 64
#!bind N = 256
#!bind T = module(tilec.language)
#!bind block_M = 16
#!bind block_N = 128
#!bind transposed = False
@T.prim_func
def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((N, M) if transposed else (M, N), "float16")):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            if transposed:
                B[bx * block_N + j, by * block_M + i] = A[by * block_M + i, bx * block_N + j] * 2
            else:
                B[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2
