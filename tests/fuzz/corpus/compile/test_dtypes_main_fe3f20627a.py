#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind dtype = "int8"
#!bind n = 64
@T.prim_func
def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.serial(n):
            C[i] = A[i] + B[i] * 2 - 3
