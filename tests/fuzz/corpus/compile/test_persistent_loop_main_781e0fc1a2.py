#!target cuda sm_80
#!func main
#!bind K = 64
#!bind M = 96
#!bind N = 80
#!bind T = module(tilec.language)
#!bind bK = 32
#!bind bM = 32
#!bind bN = 16
#!bind blocks = 5
@T.prim_func
def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(blocks, threads=128) as b:
        A_s = T.alloc_shared((bM, bK), "float32")
        B_s = T.alloc_shared((bK, bN), "float32")
        C_l = T.alloc_fragment((bM, bN), "float32")
        for bx, by in T.Persistent([T.ceildiv(M, bM), T.ceildiv(N, bN)], blocks, b):
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=2):
                T.copy(A[bx * bM, k * bK], A_s)
                T.copy(B[k * bK, by * bN], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[bx * bM, by * bN])
