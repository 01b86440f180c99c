#!target cuda sm_80
#!func main
#!bind K = 512
#!bind M = 512
#!bind N = 512
#!bind T = module(tilec.language)
#!bind bK = 64
#!bind bM = 128
#!bind bN = 256
#!bind b_shape = (512, 512)
#!bind dtype = "bfloat16"
#!bind keep_registers = False
#!bind out_dtype = "bfloat16"
#!bind panel = 0
#!bind shared_epilogue = False
#!bind stages = 3
#!bind threads = 256
#!bind trans_b = False
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), out_dtype)):
    with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
        if panel:
            T.use_swizzle(panel)
        if keep_registers:
            T.no_set_max_nreg()
        A_s = T.alloc_shared((bM, bK), dtype)
        B_s = T.alloc_shared(((bN, bK) if trans_b else (bK, bN)), dtype)
        C_l = T.alloc_fragment((bM, bN), "float32")
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
            T.copy(A[by * bM, k * bK], A_s)
            if trans_b:
                T.copy(B[bx * bN, k * bK], B_s)
            else:
                T.copy(B[k * bK, bx * bN], B_s)
            T.gemm(A_s, B_s, C_l, transpose_B=trans_b)
        if shared_epilogue:
            C_s = T.alloc_shared((bM, bN), out_dtype)
            T.copy(C_l, C_s)
            T.copy(C_s, C[by * bM, bx * bN])
        else:
            T.copy(C_l, C[by * bM, bx * bN])
