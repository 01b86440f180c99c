#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind batch = 2
#!bind block_M = 64
#!bind dim = 64
#!bind dtype = "bfloat16"
#!bind heads = 8
#!bind layout = "bshd"
#!bind seq_q = 1000
#!bind shape = [2, 1000, 8, 64]
#!bind threads = 128
@T.prim_func
def main(O: T.Tensor(shape, dtype), dO: T.Tensor(shape, dtype), Delta: T.Tensor([batch, heads, seq_q], "float32")):
    with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
        o = T.alloc_fragment([block_M, dim], "float32")
        do = T.alloc_fragment([block_M, dim], "float32")
        delta = T.alloc_fragment([block_M], "float32")
        rows = bx * block_M
        if layout == "bshd":
            T.copy(O[bz, rows:rows + block_M, by, :], o)
            T.copy(dO[bz, rows:rows + block_M, by, :], do)
        else:
            T.copy(O[bz, by, rows:rows + block_M, :], o)
            T.copy(dO[bz, by, rows:rows + block_M, :], do)
        for i, j in T.Parallel(block_M, dim):
            o[i, j] *= do[i, j]
        T.reduce_sum(o, delta, dim=1)
        T.copy(delta, Delta[bz, by, rows:rows + block_M])
