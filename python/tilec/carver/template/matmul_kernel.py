"""The kernel MatmulTemplate.equivalent_function returns: C = A @ B (+ Bias), A and B
transposed as the template says, accumulated in accum_dtype and stored as out_dtype."""

from ... import language as T

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32


def matmul_prim_func(M, N, K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype, with_bias):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (BLOCK_K, BLOCK_M) if trans_A else (BLOCK_M, BLOCK_K)
    B_tile = (BLOCK_N, BLOCK_K) if trans_B else (BLOCK_K, BLOCK_N)

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

    if with_bias:
        @T.prim_func
        def matmul_bias(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
                        Bias: T.Tensor((N,), accum_dtype), C: T.Tensor((M, N), out_dtype)):
            with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
                C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), accum_dtype)
                accumulate(A, B, C_local, bx, by)
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    if by * BLOCK_M + i < M and bx * BLOCK_N + j < N:
                        C[by * BLOCK_M + i, bx * BLOCK_N + j] = C_local[i, j] + Bias[bx * BLOCK_N + j]

        return matmul_bias

    @T.prim_func
    def matmul(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
               C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
            C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), accum_dtype)
            accumulate(A, B, C_local, bx, by)
            T.copy(C_local, C[by * BLOCK_M, bx * BLOCK_N])

    return matmul
