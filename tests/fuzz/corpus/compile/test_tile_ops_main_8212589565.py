#!func main
#!bind K = 64
#!bind M = 130
#!bind N = 100
#!bind T = module(tilec.language)
#!bind batch = 3
#!bind block = 32
#!bind panel = 1
@T.prim_func
def main(A: T.Tensor((batch, M, K), "float16"), B: T.Tensor((batch, K, N), "float16"),
         C: T.Tensor((batch, M, N), "float32")):
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), batch, threads=128) as (bx, by, bz):
        T.use_swizzle(panel)
        A_s = T.alloc_shared((block, 32), "float16")
        B_s = T.alloc_shared((32, block), "float16")
        C_f = T.alloc_fragment((block, block), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[bz, by * block, k * 32], A_s)
            T.copy(B[bz, k * 32, bx * block], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[bz, by * block, bx * block])
