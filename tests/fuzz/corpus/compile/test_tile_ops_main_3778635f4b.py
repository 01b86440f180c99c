#!target hip gfx906
#!func main
#!bind K = 64
#!bind M = 130
#!bind N = 200
#!bind T = module(tilec.language)
#!bind block = 32
#!bind order = "row"
#!bind panel = 1
@T.prim_func
def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        T.use_swizzle(panel, order=order)
        A_s = T.alloc_shared((block, 32), "float16")
        B_s = T.alloc_shared((32, block), "float16")
        C_f = T.alloc_fragment((block, block), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[by * block, k * 32], A_s)
            T.copy(B[k * 32, bx * block], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block, bx * block])
