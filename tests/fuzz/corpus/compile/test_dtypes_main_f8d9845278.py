#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind block = 32
#!bind dtype = "float16"
#!bind n = 100
@T.prim_func
def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), S: T.Tensor((n,), dtype),
         P: T.Tensor((n,), dtype)):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                S[bx * block + i] = A[bx * block + i] + B[bx * block + i]
                P[bx * block + i] = A[bx * block + i] * B[bx * block + i]
