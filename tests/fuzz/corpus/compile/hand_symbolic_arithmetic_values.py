#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind page_size = 64
#!bind pages = sym(pages)
#!bind width = arith(mul, sym(pages), 64)
#!bind last = arith(sub, arith(mul, sym(pages), 64), 1)
#!bind half = arith(floordiv, sym(rows), 2)
@T.prim_func
def main(Table: T.Tensor((T.symbolic("rows"), pages), "int32"), Rows: T.Tensor((T.symbolic("rows"), width), "int32")):
    with T.Kernel(T.symbolic("rows") * 2, threads=128) as program:
        r = program // 2
        for i in T.Parallel(page_size):
            column = (program % 2) * page_size + i
            if r < half:
                Rows[r, T.min(column, last)] = Table[r, T.min(column // page_size, pages - 1)] + width % 7
