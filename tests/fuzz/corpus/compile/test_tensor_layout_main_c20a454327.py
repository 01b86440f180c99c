#!target hip gfx90a
#!func main
#!bind B = 2
#!bind H = 3
#!bind L = 32
#!bind T = module(tilec.language)
#!bind blk = 16
#!bind dq_layout = func(dq_layout)
#!bind shape = (2, 3, 32, 16)
@T.prim_func
def main(dQ: T.Tensor(shape, "float32"), dQ_out: T.Tensor(shape, "float16")):
    with T.Kernel(L // blk, H, B, threads=128) as (bx, by, bz):
        T.annotate_layout({dQ: dq_layout(dQ)})
        T.copy(dQ[bz, by, bx * blk:(bx + 1) * blk, :], dQ_out[bz, by, bx * blk:(bx + 1) * blk, :])


def dq_layout(dQ):
    # TileLang's make_dq_layout (example_mha_bwd_bhsd.py): 8 x 8 blocks for atomic adds.
    return T.Layout(dQ.shape, lambda b, h, l, d: [b, h, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])
