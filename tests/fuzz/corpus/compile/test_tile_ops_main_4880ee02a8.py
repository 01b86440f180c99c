#!target hip gfx906
#!func main
#!bind K = 16
#!bind M = 32
#!bind N = 48
#!bind T = module(tilec.language)
#!bind clear_accum = False
#!bind repeat = 1
@T.prim_func
def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
         C0: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((M, K), "float32")
        B_s = T.alloc_shared((K, N), "float32")
        C_f = T.alloc_fragment((M, N), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.copy(C0, C_f)
        for r in T.serial(repeat):
            T.gemm(A_s, B_s, C_f, clear_accum=clear_accum)
        T.copy(C_f, C)
