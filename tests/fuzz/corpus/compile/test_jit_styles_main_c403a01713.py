#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind block = 64
#!bind factor = 3.0
#!bind n = 100
#!bind threads = 64
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                B[bx * block + i] = A[bx * block + i] * factor
