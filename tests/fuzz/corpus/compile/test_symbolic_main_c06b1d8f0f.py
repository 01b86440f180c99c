#!target hip gfx940
#!func main
#!bind K = 50
#!bind M = sym(m)
#!bind N = 40
#!bind T = module(tilec.language)
#!bind block = 32
@T.prim_func
def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
         C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_s = T.alloc_shared((block, block), "float32")
        B_s = T.alloc_shared((block, block), "float32")
        C_f = T.alloc_fragment((block, block), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
            T.copy(A[by * block, k * block], A_s)
            T.copy(B[k * block, bx * block], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block, bx * block])
