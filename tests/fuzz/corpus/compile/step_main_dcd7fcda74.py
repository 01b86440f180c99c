#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind batch = 128
#!bind next_n = 2
#!bind threads = 128
#!bind width = 131072
@T.prim_func
def main(ContextLens: T.Tensor((batch,), "int32"), KE: T.Tensor((batch * next_n,), "int32")):
    with T.Kernel(T.ceildiv(batch * next_n, threads), threads=threads) as bx:
        for i in T.Parallel(threads):
            row = bx * threads + i
            if row < batch * next_n:
                KE[row] = T.max(T.min(ContextLens[row // next_n] - next_n + row % next_n + 1, width), 0)
