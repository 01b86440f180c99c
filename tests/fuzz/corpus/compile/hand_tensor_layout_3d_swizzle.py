#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind B = 2
#!bind L = 64
#!bind D = 64
import tilec.language as T


@T.prim_func
def main(X: T.Tensor((B, L, D), "float32"), Y: T.Tensor((B, L, D), "float32")):
    with T.Kernel(L // 16, D // 16, B, threads=128) as (bx, by, bz):
        T.annotate_layout({Y: T.Layout((B, L, D), lambda b, l, d: [b, l // 8, d // 8, d % 2, 4 * (l % 8) + d % 8 // 2])})
        T.use_swizzle(3)
        T.no_set_max_nreg()
        for i, j in T.Parallel(16, 16):
            T.atomic_add(Y[bz, bx * 16 + i, by * 16 + j], X[bz, bx * 16 + i, by * 16 + j])
