#!func main
#!bind K = 160
#!bind M = 200
#!bind N = 300
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 128
#!bind bN = 128
#!bind dtype = "float16"
#!bind half = 64
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=256) as (bx, by):
        A_s = T.alloc_shared((bM, bK), dtype)
        B0 = T.alloc_shared((bK, half), dtype)
        B1 = T.alloc_shared((bK, half), dtype)
        C0 = T.alloc_fragment((bM, half), "float32")
        C1 = T.alloc_fragment((bM, half), "float32")
        with T.ws(1):
            T.clear(C1)
        with T.ws(0):
            T.clear(C0)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=0):
            T.copy(A[by * bM, k * bK], A_s)
            with T.ws(1):
                T.copy(B[k * bK, bx * bN], B1)
                T.gemm(A_s, B1, C1)
            with T.ws(0):
                T.copy(B[k * bK, bx * bN + half], B0)
                T.gemm(A_s, B0, C0)
        with T.ws(1):
            T.copy(C1, C[by * bM, bx * bN])
        with T.ws(0):
            T.copy(C0, C[by * bM, bx * bN + half])
