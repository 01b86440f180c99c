#!target cuda sm_90a
#!func main
#!bind L = 1073741824
#!bind T = module(tilec.language)
@T.prim_func
def main(dQ: T.Tensor((L, 3, 2), "float32"), out: T.Tensor((L, 3, 2), "float32")):
    with T.Kernel(L // 128, threads=128) as bx:
        T.annotate_layout({dQ: T.Layout(dQ.shape, lambda l, h, d: [h, l, d])})
        for i, h, d in T.Parallel(128, 3, 2):
            out[bx * 128 + i, h, d] = dQ[bx * 128 + i, h, d]
