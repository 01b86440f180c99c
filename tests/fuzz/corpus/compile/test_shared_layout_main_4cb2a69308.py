#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind layout = "xor_columns"
#!bind n = 48
#!bind tilelang = module(tilec)
@T.prim_func
def main(A: T.Tensor((n, 32), "float32"), B: T.Tensor((n, 32), "float32")):
    with T.Kernel(n // 16, threads=128) as bx:
        A_s = T.alloc_shared((16, 32), "float32")
        if layout == "xor_columns":  # column-major, rows XOR-permuted: no two neighbours adjacent
            T.annotate_layout({A_s: T.Layout((16, 32), lambda i, j: j * 16 + (i ^ (j % 16)))})
        elif layout == "coordinates":  # runs of 4 kept whole, moved by the row
            T.annotate_layout({A_s: T.Layout((16, 32), lambda i, j: (i, j ^ (i % 8) * 4))})
        else:
            T.annotate_layout({A_s: tilelang.layout.make_swizzled_layout(A_s)})
        T.copy(A[bx * 16, 0], A_s)
        for i, j in T.Parallel(16, 32):
            B[bx * 16 + i, j] = A_s[i, 31 - j] * 2.0
