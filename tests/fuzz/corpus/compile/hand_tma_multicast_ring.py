#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
import tilec.language as T


# TMA multicast through a ring of stages (T.tma_copy(cluster_mask=...)) in clusters of 4 with
# ranks 1 and 2 masked; the issuer reloads a stage once every masked block arrived at its copy
# of `free`. Then a gemm of two accumulators, each step's issued before the last one's reads.
@T.prim_func
def main(A: T.Tensor((6, 64, 32), "float32"), Out: T.Tensor((8, 6, 64, 32), "float32"),
         X: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(8, threads=128, cluster_dims=4) as bx:
        stages = T.alloc_shared((2, 64, 32), "float32")
        full = T.alloc_cluster_barrier([128] * 2)
        free = T.alloc_cluster_barrier([2] * 2)
        X_s = T.alloc_shared((64, 64), "float16")
        S_f = T.alloc_fragment((64, 64), "float32")
        R_f = T.alloc_fragment((64, 64), "float32")
        rank = T.block_rank_in_cluster()
        tx = T.get_thread_binding()
        for step in T.serial(6):
            slot = step % 2
            if (rank == 1) & (step >= 2):
                T.mbarrier_wait_parity(free[slot], (step // 2 - 1) % 2)
            T.tma_copy(A[step, :, :], stages[slot, :, :], barrier=full[slot], cluster_mask=0b0110)
            T.barrier_arrive(full[slot])
            T.barrier_wait(full[slot], (step // 2) % 2)
            for i, j in T.Parallel(64, 32):
                Out[bx, step, i, j] = stages[slot, i, j] + rank
            T.sync_threads()
            if (tx == 0) & (((6 >> rank) & 1) == 1):
                T.mbarrier_arrive(free[slot], cta_id=1)
        T.copy(X, X_s)
        T.gemm(X_s, X_s, S_f, clear_accum=True, wg_wait=-1)
        for r in T.serial(2):
            T.gemm(X_s, X_s, R_f, clear_accum=True, wg_wait=-1)
            T.wait_wgmma(1)
            T.copy(S_f, C)
            T.gemm(X_s, X_s, S_f, clear_accum=True, wg_wait=-1)
            T.wait_wgmma(1)
            T.copy(R_f, C)
        T.wait_wgmma(0)
        T.copy(S_f, C)
