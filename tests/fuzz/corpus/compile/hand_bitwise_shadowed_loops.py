#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 64
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((4, n), "uint16"), B: T.Tensor((4, n), "uint16")):
    with T.Kernel(1, threads=64) as bx:
        row = T.alloc_fragment((n,), "uint16")
        total = T.alloc_var("uint16")
        T.clear(total)
        for i in T.serial(4):
            for i, j in T.Parallel(1, n):
                row[j] = (~A[0, j] & 0xFFFF) >> 8 | (A[0, j] << 3) ^ i
            for j in T.Parallel(n):
                B[i, j] = T.if_then_else(A[i, j] < row[j], ~A[i, j] & 0x7F, A[i, j] | (row[j] >> 1))
