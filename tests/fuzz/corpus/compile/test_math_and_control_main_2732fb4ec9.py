#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = 50
@T.prim_func
def main(A: T.Tensor((n,), "float32"), C: T.Tensor((4,), "float32"),
         H: T.Tensor((2,), "float16")):
    with T.Kernel(1, threads=128) as bx:
        m = T.alloc_local((1,), "float32")
        m[0] = -T.infinity("float32")
        for i in T.serial(n):
            m[0] = T.max(m[0], A[i])
        C[0] = m[0]
        C[1] = T.infinity("float32")
        C[2] = -T.infinity("float32")
        C[3] = T.min(T.infinity("float32"), A[0])
        H[0] = T.infinity("float16")
        H[1] = -T.infinity("float16")
