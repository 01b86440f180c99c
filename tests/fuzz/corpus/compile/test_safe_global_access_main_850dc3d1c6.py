#!target hip gfx940
#!func main
#!bind PICKS = 32
#!bind ROWS = 40
#!bind T = module(tilec.language)
#!bind WIDTH = 16
@T.prim_func
def main(table: T.Tensor((ROWS, WIDTH), "float32"), picks: T.Tensor((PICKS,), "int32"),
         out: T.Tensor((PICKS, WIDTH), "float32")):
    with T.Kernel(1, threads=128) as bx:
        rows = T.alloc_shared((PICKS, WIDTH), "float32")
        for i, j in T.Parallel(PICKS, WIDTH):
            rows[i, j] = table[picks[i], j]
        for i, j in T.Parallel(PICKS, WIDTH):
            out[i, j] = rows[i, j]
