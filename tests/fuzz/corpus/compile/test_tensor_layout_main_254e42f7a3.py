#!target cuda sm_90a
#!func main
#!bind K = 256
#!bind M = 256
#!bind N = 256
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(N // 64, M // 64, threads=128) as (bx, by):
        T.annotate_layout({A: T.Layout(A.shape, lambda i, j: [j // 64, i, j % 64])})
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.clear(C_f)
        for k in T.Pipelined(K // 64, num_stages=3):
            T.copy(A[by * 64, k * 64], A_s)
            T.copy(B[k * 64, bx * 64], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 64, bx * 64])
