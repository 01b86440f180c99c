#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind bins = 7
#!bind block = 16
#!bind n = 256
@T.prim_func
def main(V: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float32"),
         H: T.Tensor((bins,), "int32"), S: T.Tensor((1,), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.serial(block):
            if bx * block + i < n:
                T.atomic_add(H[V[bx * block + i]], 1)
                T.atomic_add(S[0], X[bx * block + i])
