#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((256, 64), 'float16'), C: T.Tensor((256, 64), 'float16')):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((128, 64), 'float16')
        bars = T.alloc_barrier([128, 128])
        v = T.alloc_fragment((64,), 'float32')
        with T.ws(0):
            for i in T.Parallel(64):
                v[i] = T.Cast('float32', A[i, 0])
            T.barrier_wait(bars[0], 0)
        with T.ws(1):
            T.copy(A[0:128, :], A_s)
            T.barrier_arrive(bars[0])
        with T.ws(0):
            for i in T.Parallel(64):
                C[i, 0] = T.Cast('float16', v[i]) + A_s[i, 1]
