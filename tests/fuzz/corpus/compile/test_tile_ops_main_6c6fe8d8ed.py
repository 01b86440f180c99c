#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind block = 64
#!bind n = 1000
@T.prim_func
def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=64) as bx:
        T.use_swizzle(4)
        for i in T.Parallel(block):
            if bx * block + i < n:
                B[bx * block + i] = A[bx * block + i] * 2
