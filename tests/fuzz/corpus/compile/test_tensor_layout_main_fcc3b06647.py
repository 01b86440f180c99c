#!target hip gfx90a
#!func main
#!bind D = 8
#!bind H = 3
#!bind L = 16
#!bind T = module(tilec.language)
#!bind blk = 8
@T.prim_func
def main(dQ: T.Tensor((L, H, D), "float32"), dQ_out: T.Tensor((L, H, D), "float32")):
    with T.Kernel(T.ceildiv(L, blk), H, threads=64) as (bx, by):
        T.annotate_layout({dQ: T.Layout(dQ.shape, lambda l, h, d: [h, l, d])})
        s = T.alloc_shared((blk, D), "float32")
        T.copy(dQ[bx * blk:(bx + 1) * blk, by, :], s)
        T.copy(s, dQ_out[bx * blk:(bx + 1) * blk, by, :])
