#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind cols = sym(cols)
#!bind rows = sym(rows)
@T.prim_func
def main(mat: T.Tensor((rows, cols), "float32"), vec: T.Tensor((cols,), "float32"),
         out: T.Tensor((rows,), "float32")):
    with T.Kernel(rows, threads=128) as r:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for c in T.serial(cols):
            acc[0] += mat[r, c] * vec[c]
        out[r] = acc[0]
