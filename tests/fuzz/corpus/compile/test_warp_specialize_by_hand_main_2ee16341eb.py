#!func main
#!bind K = 320
#!bind M = 128
#!bind N = 256
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 64
#!bind bN = 128
#!bind dtype = "float16"
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
        A_s = T.alloc_shared((2, bM, bK), dtype)
        B_s = T.alloc_shared((2, bK, bN), dtype)
        C_l = T.alloc_fragment((bM, bN), "float32")
        ready = T.alloc_barrier([128, 128])
        free = T.alloc_barrier([128, 128])
        tx = T.get_thread_binding()
        if tx < 128:
            T.set_max_nreg(232, 1)
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, bK)):
                T.barrier_wait(ready[k % 2], (k // 2) % 2)
                T.wgmma_gemm(A_s[k % 2, :, :], B_s[k % 2, :, :], C_l)
                T.wait_wgmma(0)
                T.barrier_arrive(free[k % 2])
            T.copy(C_l, C[by * bM, bx * bN])
        else:
            T.set_max_nreg(40, 0)
            for k in T.serial(T.ceildiv(K, bK)):
                T.barrier_wait(free[k % 2], ((k // 2) % 2) ^ 1)
                for r in T.serial(bM * bK // 8 // 128):
                    row = r * 16 + (tx - 128) // 8
                    col = (tx - 128) % 8 * 8
                    T.ptx_cp_async(T.access_ptr(A_s[k % 2, row, col], "w", 8),
                                   T.access_ptr(A[by * bM + row, k * bK + col], "r", 8), 8)
                for r in T.serial(bK * bN // 8 // 128):
                    row = r * 8 + (tx - 128) // 16
                    col = (tx - 128) % 16 * 8
                    T.ptx_cp_async(T.access_ptr(B_s[k % 2, row, col], "w", 8),
                                   T.access_ptr(B[k * bK + row, bx * bN + col], "r", 8), 8)
                T.cp_async_barrier_noinc(ready[k % 2])
