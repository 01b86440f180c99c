#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind block = 64
#!bind n = 128
#!bind split_then_combine_blocks = func(split_then_combine_blocks)
#!bind splits = 3
@T.prim_func
def main(A: T.Tensor((n, splits * block), "float32"), Out: T.Tensor((n,), "float32")):
    partial = T.alloc_global((splits, n), "float32")
    split_then_combine_blocks(A, partial, Out, n, splits, block)


@T.macro
def split_then_combine_blocks(A, partial, Out, n, splits, block):
    # Pass 1: each (row block, split) sums its slice of the columns into partial.
    # Pass 2: each row block adds its splits up, in a grid and with threads of its own.
    with T.Kernel(T.ceildiv(n, block), splits, threads=128) as (bx, s):
        tile = T.alloc_fragment((block, block), "float32")
        sums = T.alloc_fragment((block,), "float32")
        T.copy(A[bx * block, s * block], tile)
        T.reduce_sum(tile, sums, dim=1)
        T.copy(sums, partial[s, bx * block])
    with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
        total = T.alloc_fragment((32,), "float32")
        T.clear(total)
        for k in T.serial(splits):
            for i in T.Parallel(32):
                total[i] += partial[k, bx * 32 + i]
        T.copy(total, Out[bx * 32])
