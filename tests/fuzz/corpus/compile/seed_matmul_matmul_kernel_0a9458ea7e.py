#!target hip gfx90a
#!func matmul_kernel
#!bind K = 64
#!bind M = 64
#!bind N = 64
#!bind T = module(tilec.language)
def matmul_kernel(M, N, K):
    A = T.Tensor[(M, K), "float32"]
    B = T.Tensor[(K, N), "float32"]
    C = T.Tensor[(M, N), "float32"]

    with T.Kernel(T.ceildiv(M, 32), T.ceildiv(N, 32)) as (bx, by):
        # 分配共享内存
        A_shared = T.alloc_shared((32, 32), "float32")
        B_shared = T.alloc_shared((32, 32), "float32")

        # 初始化累加器
        C_local = T.alloc_fragment((32, 32), "float32")
        T.clear(C_local)

        # 分块矩阵乘法
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
            T.copy(A[by*32, k*32], A_shared)
            T.copy(B[bx*32, k*32], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        # 结果写回全局内存
        T.copy(C_local, C[by*32, bx*32])
