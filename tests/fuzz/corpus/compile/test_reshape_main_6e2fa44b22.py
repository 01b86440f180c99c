#!target cuda sm_90a
#!func main
#!bind M = 32
#!bind N = 1024
#!bind T = module(tilec.language)
#!bind threads = 32
@T.prim_func
def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // M,), "float32")):
    with T.Kernel(1, threads=threads) as _:
        A_local = T.alloc_fragment((N,), "float32")
        B_local = T.alloc_fragment((N // M,), "float32")
        T.copy(A, A_local)
        groups = T.reshape(A_local, [N // M, M])
        T.reduce_max(groups, B_local, dim=1)
        T.copy(B_local, B)
