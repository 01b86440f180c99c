#!target cuda sm_90a
#!func main
#!bind M = 32
#!bind N = 1024
#!bind T = module(tilec.language)
#!bind dtype = "float32"
@T.prim_func
def main(A: T.Tensor((N // M, M), dtype), B: T.Tensor((N,), dtype)):
    with T.Kernel(1, threads=32) as _:
        A_shared = T.alloc_shared((N // M, M), dtype)
        A_local = T.alloc_fragment((N // M, M), dtype)
        B_shared = T.alloc_shared((N,), dtype)
        T.copy(A, A_shared)
        T.copy(A_shared, A_local)
        flat = T.reshape(A_local, [N])
        T.copy(flat, B_shared)
        T.copy(B_shared, B)
