#!func main
#!bind T = module(tilec.language)
#!bind group = 4
#!bind heads = 12
@T.prim_func
def main(Q: T.Tensor((2, heads, 16), "float32"), O: T.Tensor((2, heads, 16), "float32")):
    with T.Kernel(2, heads // group, threads=32) as (b, g):
        Q_shared = T.alloc_shared((group, 16), "float32")
        H0 = g * group + (b % 2) * 0
        H1 = H0 + group
        T.copy(Q[b, H0:H1, :], Q_shared)
        for i, j in T.Parallel(group, 16):
            Q_shared[i, j] = Q_shared[i, j] * 2
        T.copy(Q_shared, O[b, H0:H1, :])
