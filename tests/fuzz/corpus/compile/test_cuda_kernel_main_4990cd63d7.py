#!target hip gfx1100
#!func main
#!bind T = module(tilec.language)
#!bind block = 128
#!bind n = sym(n)
@T.prim_func
def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
         Z: T.Tensor((n,), "float32"), alpha: T.float32):
    with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]
