#!func main
#!config tilec.bounds_check=true
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(2) as bx:
        s = T.alloc_shared((8,), "float32")
        T.copy(A[bx * 8], s)
        for i in T.Parallel(8):
            B[bx * 8 + i] = s[i] * 2.0
