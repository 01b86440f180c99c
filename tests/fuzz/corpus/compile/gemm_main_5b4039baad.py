#!func main
#!bind B_shape = (64, 128)
#!bind B_tile = (32, 64)
#!bind K = 64
#!bind M = 128
#!bind N = 128
#!bind T = module(tilec.language)
#!bind accum_dtype = "float32"
#!bind block_K = 32
#!bind block_M = 64
#!bind block_N = 64
#!bind dtype = "float16"
#!bind num_stages = 4
#!bind panel = 0
#!bind shared_epilogue = False
#!bind threads = 128
#!bind trans_B = False
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        if panel:
            T.use_swizzle(panel)
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared(B_tile, dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            if trans_B:
                T.copy(B[bx * block_N, k * block_K], B_shared)
            else:
                T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=trans_B)
        if shared_epilogue:
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])
        else:
            T.copy(C_local, C[by * block_M, bx * block_N])
