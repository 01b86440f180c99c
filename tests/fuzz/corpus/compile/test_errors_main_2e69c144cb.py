#!func main
#!bind T = module(tilec.language)
@T.prim_func
def main(A: T.Tensor((32, 16), "float32"), B: T.Tensor((32, 32), "float32"),
         C: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((32, 16), "float32")
        B_s = T.alloc_shared((32, 32), "float32")
        C_f = T.alloc_fragment((32, 32), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(C_f)
        T.gemm(A_s, B_s, C_f)  # ERR:gemm-k-mismatch
        T.copy(C_f, C)
