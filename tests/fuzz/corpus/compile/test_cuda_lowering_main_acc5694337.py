#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind disable_tma = False
#!bind prefer_instruction = None
#!bind read_thread_index = False
@T.prim_func
def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
         C: T.Tensor((256, 256), "float32"), D: T.Tensor((256,), "float32")):
    with T.Kernel(2, 2, threads=256) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((64, 128), "float16")
        C_f = T.alloc_fragment((128, 128), "float32")
        T.clear(C_f)
        for k in T.Pipelined(4, num_stages=3):
            T.copy(A[by * 128, k * 64], A_s, disable_tma=disable_tma, prefer_instruction=prefer_instruction)
            T.copy(B[k * 64, bx * 128], B_s, coalesced_width=8, eviction_policy="evict_last")
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 128, bx * 128])
        if read_thread_index:
            D[T.get_thread_binding()] = 1.0
