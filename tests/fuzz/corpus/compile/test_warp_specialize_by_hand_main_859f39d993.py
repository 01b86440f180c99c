#!target hip gfx90a
#!func main
#!bind K = 256
#!bind M = 256
#!bind N = 256
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 128
#!bind bN = 128
#!bind consumer = 0
#!bind dtype = "float16"
#!bind producer = 1
#!bind regs = False
#!bind stages = 2
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
        A_s = T.alloc_shared((stages, bM, bK), dtype)
        B_s = T.alloc_shared((stages, bK, bN), dtype)
        C_l = T.alloc_fragment((bM, bN), "float32")
        bars = T.alloc_barrier([128] * (2 * stages))
        with T.ws(consumer):
            T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
            with T.ws(producer):
                if regs:
                    T.set_max_nreg(40, 0)
                T.mbarrier_wait_parity(bars[k % stages + stages], (k // stages) % 2 ^ 1)
                T.tma_copy(A[by * bM:(by + 1) * bM, k * bK:(k + 1) * bK], A_s[k % stages, :, :],
                           barrier=bars[k % stages])
                T.tma_copy(B[k * bK, bx * bN], B_s[k % stages, :, :], barrier=bars[k % stages])
                T.mbarrier_arrive(bars[k % stages])
            with T.ws(consumer):
                T.barrier_wait(bars[k % stages], (k // stages) % 2)
                T.gemm(A_s[k % stages, :, :], B_s[k % stages, :, :], C_l)
                T.barrier_arrive(bars[k % stages + stages])
        with T.ws(consumer):
            T.copy(C_l, C[by * bM, bx * bN])
