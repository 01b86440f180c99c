#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind block = 16
#!bind n = 10
#!bind offset = -2
#!bind scale = 0.3333333333333333
@T.prim_func
def main(A: T.Tensor((n,), "float32"), C: T.Tensor((2, n), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                C[0, bx * block + i] = A[bx * block + i] * scale + offset
                C[1, bx * block + i] = A[bx * block + i] * (block // 2 + 1)
