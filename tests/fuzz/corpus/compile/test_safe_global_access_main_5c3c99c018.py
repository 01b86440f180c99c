#!func main
#!config tilec.bounds_check=true
#!bind PICKS = 32
#!bind ROWS = 40
#!bind T = module(tilec.language)
#!bind WIDTH = 16
@T.prim_func
def main(table: T.Tensor((ROWS, WIDTH), "float32"), picks: T.Tensor((PICKS,), "int32"),
         out: T.Tensor((PICKS, WIDTH), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(PICKS, WIDTH):
            out[i, j] = table[picks[i], j]
