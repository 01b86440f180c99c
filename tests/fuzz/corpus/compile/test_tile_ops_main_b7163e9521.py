#!target hip gfx906
#!func main
#!bind A_shape = (32, 32)
#!bind A_tile = (32, 32)
#!bind B_shape = (32, 32)
#!bind B_tile = (32, 32)
#!bind K = 32
#!bind M = 32
#!bind N = 32
#!bind T = module(tilec.language)
#!bind accum_dtype = "float32"
#!bind block_K = 32
#!bind block_M = 32
#!bind block_N = 32
#!bind in_dtype = "float32"
#!bind num_stages = 2
#!bind trans_A = False
#!bind trans_B = False
@T.prim_func
def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
         C: T.Tensor((M, N), accum_dtype)):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared(A_tile, in_dtype)
        B_s = T.alloc_shared(B_tile, in_dtype)
        C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            if trans_A:
                T.copy(A[k * block_K, by * block_M], A_s)
            else:
                T.copy(A[by * block_M, k * block_K], A_s)
            if trans_B:
                T.copy(B[bx * block_N, k * block_K], B_s)
            else:
                T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f, transpose_A=trans_A, transpose_B=trans_B)
        T.copy(C_f, C[by * block_M, bx * block_N])
