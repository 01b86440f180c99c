#!target hip gfx906
#!func main
#!bind B = 2
#!bind D = 16
#!bind H = 3
#!bind L = 32
#!bind T = module(tilec.language)
#!bind blk = 16
#!bind dq_layout = func(dq_layout)
#!bind shape = (2, 3, 32, 16)
@T.prim_func
def main(A: T.Tensor(shape, "float32"), dQ: T.Tensor(shape, "float32")):
    with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
        T.annotate_layout({dQ: dq_layout(dQ)})
        a = T.alloc_fragment((blk, D), "float32")
        T.copy(A[bz, by, bx * blk:(bx + 1) * blk, :], a)
        for i, j in T.Parallel(blk, D):
            T.atomic_add(dQ[bz, by, bx * blk + i, j], a[i, j] * 2.0)
        T.atomic_add(dQ[bz, by, bx * blk:(bx + 1) * blk, :], a)


def dq_layout(dQ):
    # TileLang's make_dq_layout (example_mha_bwd_bhsd.py): 8 x 8 blocks for atomic adds.
    return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])
