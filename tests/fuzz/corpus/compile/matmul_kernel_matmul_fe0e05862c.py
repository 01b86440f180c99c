#!target cuda sm_90a
#!func matmul
#!bind A_shape = (256, 128)
#!bind BLOCK_M = 64
#!bind BLOCK_N = 64
#!bind B_shape = (256, 128)
#!bind M = 256
#!bind N = 256
#!bind T = module(tilec.language)
#!bind accum_dtype = float32
#!bind accumulate = func(accumulate)
#!bind A_tile = (64, 32)
#!bind BLOCK_K = 32
#!bind B_tile = (64, 32)
#!bind K = 128
#!bind in_dtype = float16
#!bind trans_A = False
#!bind trans_B = True
#!bind out_dtype = float16
@T.prim_func
def matmul(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
           C: T.Tensor((M, N), out_dtype)):
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
        C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), accum_dtype)
        accumulate(A, B, C_local, bx, by)
        T.copy(C_local, C[by * BLOCK_M, bx * BLOCK_N])


@T.macro
def accumulate(A, B, C_local, bx, by):
    A_shared = T.alloc_shared(A_tile, in_dtype)
    B_shared = T.alloc_shared(B_tile, in_dtype)
    T.clear(C_local)
    for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
        if trans_A:
            T.copy(A[k * BLOCK_K, by * BLOCK_M], A_shared)
        else:
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_shared)
        if trans_B:
            T.copy(B[bx * BLOCK_N, k * BLOCK_K], B_shared)
        else:
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_shared)
        T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
