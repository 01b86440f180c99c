#!target cuda sm_90a
#!func main
#!bind M = 512
#!bind N = 256
#!bind T = module(tilec.language)
#!bind a_shape = (512, 1024)
#!bind bK = 64
#!bind bM = 64
#!bind bN = 128
#!bind k_dim = 1024
#!bind kind = "scalar"
#!bind stages = 1
#!bind threads = 128
@T.prim_func
def main(A: T.Tensor(a_shape, "float16"), B: T.Tensor((k_dim, N), "float16"),
         C: T.Tensor((M, N), "float32"), n_iter: T.int32):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
        A_s = T.alloc_shared((bK, bM) if kind == "symbolic" else (bM, bK), "float16")
        B_s = T.alloc_shared((bK, bN), "float16")
        C_l = T.alloc_fragment((bM, bN), "float32")
        T.clear(C_l)
        if kind == "scalar":
            trips = T.min(T.ceildiv(k_dim, bK), n_iter)
        elif kind == "varying":
            trips = T.min(T.ceildiv(k_dim, bK), by + n_iter)
        elif kind == "guarded":
            trips = T.ceildiv(k_dim, bK)
        else:
            trips = T.ceildiv(k_dim, bK)
        if kind == "guarded":
            if by < n_iter:
                for k in T.Pipelined(trips, num_stages=stages):
                    T.copy(A[by * bM, k * bK], A_s)
                    T.copy(B[k * bK, bx * bN], B_s)
                    T.gemm(A_s, B_s, C_l)
        else:
            for k in T.Pipelined(trips, num_stages=stages):
                if kind == "symbolic":
                    T.copy(A[k * bK, by * bM], A_s)
                else:
                    T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_l, transpose_A=kind == "symbolic")
        T.copy(C_l, C[by * bM, bx * bN])
