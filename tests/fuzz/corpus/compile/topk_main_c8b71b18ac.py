#!target hip gfx90a
#!func main
#!bind T = module(tilec.language)
#!bind k = 2048
#!bind max_pages = 2048
#!bind next_n = 2
#!bind page_size = 64
#!bind rows = 256
#!bind threads = 128
@T.prim_func
def main(Columns: T.Tensor((rows, k), "int32"), BlockTable: T.Tensor((rows // next_n, max_pages), "int32"),
         Out: T.Tensor((rows, k), "int32")):
    with T.Kernel(rows, T.ceildiv(k, threads), threads=threads) as (r, kb):
        for i in T.Parallel(threads):
            if kb * threads + i < k:
                column = Columns[r, kb * threads + i]
                page = column // page_size
                Out[r, kb * threads + i] = T.if_then_else(
                    (column >= 0) & (page < max_pages),
                    BlockTable[r // next_n, T.min(T.max(page, 0), max_pages - 1)] * page_size + column % page_size,
                    -1)
