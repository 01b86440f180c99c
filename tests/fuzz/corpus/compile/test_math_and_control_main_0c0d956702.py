#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind dtype = "int32"
#!bind n = 16
@T.prim_func
def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((3, n), dtype)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            C[0, i] = A[i] ^ B[i]
            C[1, i] = A[i] ^ 5
            C[2, i] = A[i ^ 1] + (i ^ 3) * 2
