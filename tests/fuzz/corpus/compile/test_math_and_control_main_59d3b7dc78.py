#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind dtype = "int32"
#!bind n = 64
@T.prim_func
def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((6, n), dtype)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(n):
            C[0, i] = A[i] & B[i]
            C[1, i] = A[i] | 0x41
            C[2, i] = ~A[i]
            C[3, i] = A[i] >> 3
            C[4, i] = (A[i] & 0x3F) << 2
            C[5, i] = T.if_then_else(A[i] < B[i], ~A[i] & 0x7F, A[i] | (B[i] >> 1))
