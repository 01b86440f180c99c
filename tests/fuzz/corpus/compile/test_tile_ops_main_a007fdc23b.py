#!target cuda sm_90a
#!func main
#!bind K = 32
#!bind M = 64
#!bind N = 128
#!bind T = module(tilec.language)
#!bind kind = "sum"
#!bind ranges = ((0, 64), (64, 128), (8, 40), (5, 50))
#!bind which = (0, 1, 2, 3)
@T.prim_func
def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"),
         Out: T.Tensor((len(ranges), M), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((M, K), "float16")
        B_s = T.alloc_shared((N, K), "float16")
        acc = T.alloc_fragment((M, N), "float32")
        row = T.alloc_fragment((M,), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)
        for r in which:
            if kind == "sum":
                T.reduce_sum(acc[:, ranges[r][0]:ranges[r][1]], row, dim=1)
            else:
                T.reduce_max(acc[:, ranges[r][0]:ranges[r][1]], row, dim=1)
            T.copy(row, Out[r, :])
