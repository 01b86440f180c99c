#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind n = sym(n)
@T.prim_func
def main(lhs_rows: T.Tensor((n, 4), "float32"), rhs_rows: T.Tensor((n, 4), "float32"),
         sum_rows: T.Tensor((n, 4), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(n, 4):
            sum_rows[i, j] = lhs_rows[i, j] + rhs_rows[i, j]
