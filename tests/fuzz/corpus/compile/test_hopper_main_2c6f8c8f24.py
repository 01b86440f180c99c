#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((256, 512), "bfloat16"), B: T.Tensor((128, 512), "bfloat16"),
         C: T.Tensor((256, 128), "float32")):
    with T.Kernel(4, threads=256) as bx:
        A_s = T.alloc_shared((64, 64), "bfloat16")
        B_s = T.alloc_shared((128, 64), "bfloat16")
        S = T.alloc_fragment((64, 128), "float32")
        T.clear(S)
        for k in T.Pipelined(8, num_stages=2):
            T.copy(A[bx * 64, k * 64], A_s)
            T.copy(B[0, k * 64], B_s)
            T.gemm(A_s, B_s, S, transpose_B=True)
            T.sync_threads()
        T.copy(S, C[bx * 64, 0])
