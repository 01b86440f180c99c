#!target cuda sm_90a
#!func main
#!bind T = module(tilec.language)
#!bind n = 128
#!bind splits = 3
#!bind block = 64
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((n, splits * block), "float32"), Out: T.Tensor((n,), "float32")):
    partial = T.alloc_global((splits, n), "float32")
    with T.Kernel(T.ceildiv(n, block), splits, threads=128) as (bx, s):
        T.use_swizzle(2)
        tile = T.alloc_fragment((block, block), "float32")
        sums = T.alloc_fragment((block,), "float32")
        T.copy(A[bx * block:(bx + 1) * block, s * block:(s + 1) * block], tile)
        T.reduce_sum(tile, sums, dim=1)
        T.copy(sums, partial[s, bx * block])
    with T.Kernel(T.ceildiv(n, 32), threads=32) as bx:
        total = T.alloc_fragment((32,), "float32")
        T.clear(total)
        for k in T.serial(splits):
            for i in T.Parallel(32):
                total[i] += partial[k, bx * 32 + i]
        T.copy(total, Out[bx * 32])
