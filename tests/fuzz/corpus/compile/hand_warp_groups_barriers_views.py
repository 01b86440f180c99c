#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 256
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((n, 64), "float16"), W: T.Tensor((4, 16, 64), "float16"), C: T.Tensor((n, 64), "float16")):
    with T.Kernel(n // 64, threads=256) as b:
        A_s = T.alloc_shared((2, 64, 64), "float16")
        W_s = T.alloc_shared((64, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        bars = T.alloc_barrier([128, 128, 128, 128])
        flat = T.Tensor((64, 64), "float16", W.data)
        tx = T.get_thread_binding()
        if tx < 128:
            T.clear(C_l)
            T.copy(flat[0, 0], W_s)
            for k in T.serial(2):
                T.barrier_wait(bars[k % 2], k // 2 % 2)
                T.wgmma_gemm(A_s[k % 2, :, :], W_s, C_l, clear_accum=(k == 0))
                T.wait_wgmma(0)
                T.barrier_arrive(bars[k % 2 + 2])
                if k > 5:
                    break
            T.copy(C_l, C[b * 64, 0])
        else:
            T.set_max_nreg(40, 0)
            for k in T.serial(2):
                T.mbarrier_wait_parity(bars[k % 2 + 2], (k // 2 % 2) ^ 1)
                T.tma_copy(A[b * 64, 0], A_s[k % 2, :, :], barrier=bars[k % 2])
                T.barrier_arrive(bars[k % 2])
                T.sync_threads(3, 128)
        T.sync_grid()
