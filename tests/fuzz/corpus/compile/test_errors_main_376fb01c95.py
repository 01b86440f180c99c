#!target hip gfx906
#!func main
#!bind T = module(tilec.language)
#!bind n = 8
@T.prim_func
def main(lhs_mat: T.Tensor((n, 4), "float32"), rhs_mat: T.Tensor((n, 4), "float32"),
         sum_mat: T.Tensor((n, 4), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(n, 4):
            sum_mat[i, j] = lhs_mat[i, j] + rhs_mat[i, j]
