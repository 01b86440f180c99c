#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((256, 64), 'float16'), C: T.Tensor((256, 64), 'float16')):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((128, 64), 'float16')
        bars = T.alloc_barrier([128, 128])
        with T.ws(0):
            T.barrier_wait(bars[0], 0)
            T.barrier_arrive(bars[1])
        with T.ws(1):
            T.barrier_wait(bars[1], 0)
            T.tma_copy(A[0:128, :], A_s, barrier=bars[0])
            T.barrier_arrive(bars[0])
