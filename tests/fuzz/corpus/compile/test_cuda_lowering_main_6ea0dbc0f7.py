#!target cuda sm_90a
#!func main
#!config tilec.wgmma=false
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((100, 128), "float16"), B: T.Tensor((100, 128), "float16")):
    with T.Kernel(T.ceildiv(100, 64), threads=128) as bx:
        a = T.alloc_fragment((64, 128), "float32")
        T.copy(A[bx * 64:(bx + 1) * 64, :], a)
        for i, j in T.Parallel(64, 128):
            a[i, j] = a[i, j] * 2
        T.copy(a, B[bx * 64:(bx + 1) * 64, :])
