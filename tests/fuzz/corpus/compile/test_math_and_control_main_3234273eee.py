#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind block = 32
#!bind dtype = "float32"
#!bind n = 32
@T.prim_func
def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((9, n), dtype)):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            idx = bx * block + i
            if idx < n:
                x = A[idx]
                y = B[idx]
                C[0, idx] = T.exp(x)
                C[1, idx] = T.exp2(x)
                C[2, idx] = T.log(T.abs(x))
                C[3, idx] = T.log2(T.abs(x))
                C[4, idx] = T.sqrt(T.abs(x))
                C[5, idx] = T.rsqrt(T.abs(x))
                C[6, idx] = T.abs(x)
                C[7, idx] = T.max(x, y)
                C[8, idx] = T.min(x, y)
