#!func main
#!bind ROWS = 40
#!bind T = module(tilec.language)
@T.prim_func
def main(table: T.Tensor((ROWS,), "float32"), picks: T.Tensor((8,), "int32"),
         out: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(8):
            out[i] = table[picks[i]]
