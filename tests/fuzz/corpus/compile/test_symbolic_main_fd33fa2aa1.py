#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind block = 32
#!bind n = sym(n)
@T.prim_func
def main(src_rows: T.Tensor((n, 8), "float32"), dst_rows: T.Tensor((n, 8), "float32")):
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i, j in T.Parallel(block, 8):
            if bx * block + i < n:
                dst_rows[bx * block + i, j] = src_rows[bx * block + i, j] * (j + 1) + n
