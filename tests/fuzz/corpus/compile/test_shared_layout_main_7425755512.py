#!target cuda sm_80
#!func main
#!bind T = module(tilec.language)
#!bind layout = "panels"
#!bind tilelang = module(tilec)
#!bind trans_b = True
@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        C_l = T.alloc_fragment((64, 64), "float32")
        if layout == "panels":  # the 128-byte panels TMA writes and wgmma reads, written out
            T.annotate_layout({B_s: T.Layout((64, 64), lambda i, j: i * 64 + ((j // 8) ^ (i % 8)) * 8 + j % 8)})
        elif layout == "xor":
            T.annotate_layout({B_s: T.Layout((64, 64), lambda i, j: i * 64 + (j ^ (i % 4)))})
        else:
            T.annotate_layout({B_s: tilelang.layout.make_swizzled_layout(B_s)})
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_l, transpose_B=trans_b, clear_accum=True)
        T.copy(C_l, C)
