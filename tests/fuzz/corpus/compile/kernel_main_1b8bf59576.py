#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((256, 64), 'float16'), C: T.Tensor((256, 64), 'float16')):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((128, 64), 'float16')
        bars = T.alloc_barrier([128, 128])
        flag = T.alloc_shared((1,), 'int32')
        flag[0] = 0
        with T.ws(0):
            while flag[0] == 0:
                T.sync_threads()
            T.copy(A_s[0:64, :], C[0:64, :])
        with T.ws(1):
            T.copy(A[0:128, :], A_s)
            T.sync_threads()
            flag[0] = 1
