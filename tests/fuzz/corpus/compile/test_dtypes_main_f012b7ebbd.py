#!target hip gfx906
#!func main
#!bind K = 70
#!bind M = 48
#!bind N = 40
#!bind T = module(tilec.language)
#!bind accum_dtype = "float32"
#!bind block = 32
#!bind in_dtype = "float16"
@T.prim_func
def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor((K, N), in_dtype),
         C: T.Tensor((M, N), accum_dtype)):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_s = T.alloc_shared((block, block), in_dtype)
        B_s = T.alloc_shared((block, block), in_dtype)
        C_f = T.alloc_fragment((block, block), accum_dtype)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
            T.copy(A[by * block, k * block], A_s)
            T.copy(B[k * block, bx * block], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block, bx * block])
