#!target hip gfx90a
#!func main
#!bind PICKS = 32
#!bind ROWS = 40
#!bind T = module(tilec.language)
@T.prim_func
def main(values: T.Tensor((PICKS,), "float32"), picks: T.Tensor((PICKS,), "int32"),
         out: T.Tensor((ROWS,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(PICKS):
            out[picks[i]] = values[i]
