#!func main
#!bind T = module(tilec.language)
#!bind block = 32
#!bind n = 4096
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block)) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i] * 2
