#!target cuda sm_80
#!func gemm_of_a_view_compiled_once
#!bind T = module(tilec.language)
@T.prim_func
def gemm_of_a_view_compiled_once(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"),
                                 C: T.Tensor((64, 64), "float32")):
    # compiled by one test alone: its warning is given once a process
    with T.Kernel(1, threads=128) as _:
        A_flat = T.alloc_shared((64 * 32,), "float16")
        A_tile = T.reshape(A_flat, (64, 32))
        B_shared = T.alloc_shared((32, 64), "float16")
        C_local = T.alloc_fragment((64, 64), "float32")
        for i, j in T.Parallel(64, 32):
            A_flat[i * 32 + j] = A[i, j]
        T.copy(B, B_shared)
        T.gemm(A_tile, B_shared, C_local, clear_accum=True)
        T.copy(C_local, C)
