#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind block = 256
#!bind dst_dtype = "float16"
#!bind n = 253961
#!bind src_dtype = "float32"
@T.prim_func
def main(X: T.Tensor((n,), src_dtype), Y: T.Tensor((n,), dst_dtype)):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                Y[bx * block + i] = T.cast(X[bx * block + i], dst_dtype)
