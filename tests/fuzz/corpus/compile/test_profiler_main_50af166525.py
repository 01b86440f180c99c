#!func main
#!bind M = 32
#!bind N = 8
#!bind T = module(tilec.language)
#!bind dtype = "float32"
@T.prim_func
def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype),
         C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
        for i, j in T.Parallel(32, N):
            C[bx * 32 + i, j] = A[bx * 32 + i, j] + B[bx * 32 + i, j]
