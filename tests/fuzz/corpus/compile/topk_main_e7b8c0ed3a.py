#!target cuda sm_90a
#!func main
#!bind BINS = 256
#!bind MAX_COLUMNS = 16777216
#!bind T = module(tilec.language)
#!bind cols = 131072
#!bind k = 2048
#!bind order_key = func(order_key)
#!bind radix_round = func(radix_round)
#!bind rows = 4096
#!bind threads = 512
@T.prim_func
def main(L: T.Tensor((rows, cols), "float32"), KS: T.Tensor((rows,), "int32"), KE: T.Tensor((rows,), "int32"),
         Out: T.Tensor((rows, k), "int32")):
    with T.Kernel(rows, threads=threads) as row:
        tx = T.get_thread_binding()
        hist = T.alloc_shared((BINS,), "int32")
        above = T.alloc_shared((BINS,), "int32")  # above[b]: candidates in bins b and up
        chosen = T.alloc_shared((3,), "int32")  # a round's bin, the candidates above it, in it
        taken = T.alloc_shared((1,), "int32")
        start = T.min(T.max(KS[row], 0), cols)
        valid = T.max(T.min(KE[row], cols), start) - start
        if valid <= k:
            for i in T.serial(T.ceildiv(k, threads)):
                slot = i * threads + tx
                if slot < k:
                    Out[row, slot] = T.if_then_else(slot < valid, start + slot, -1)
        else:
            need = T.alloc_var("int32", k)
            prefix = T.alloc_var("uint32", 0)
            mask = T.alloc_var("uint32", 0)
            for r in T.serial(4):
                radix_round(L, row, start, valid, threads, hist, above, chosen, need, prefix, mask,
                            T.uint32(0), 24 - 8 * r, 0)
            threshold = T.alloc_var("uint32", prefix)
            # the last column taken among keys equal to the threshold: all of them, unless
            # more equal it than are needed
            last_column = T.alloc_var("int32", valid)
            if need < chosen[2]:
                prefix = 0
                mask = 0
                for r in T.serial(3):
                    radix_round(L, row, start, valid, threads, hist, above, chosen, need, prefix, mask,
                                threshold, 16 - 8 * r, 1)
                last_column = MAX_COLUMNS - 1 - T.Cast("int32", prefix)
            taken[0] = 0
            T.sync_threads()
            for i in T.serial(T.ceildiv(valid, threads)):
                j = i * threads + tx
                if j < valid:
                    key = order_key(L[row, start + j])
                    if key > threshold or (key == threshold and j <= last_column):
                        slot = T.atomic_add(taken[0], 1, return_prev=True)
                        Out[row, slot] = start + j


@T.macro
def order_key(x):
    # A float32's 32-bit key, ordered as the floats are: the sign bit flipped for positives, every
    # bit for negatives; NaN the largest, -0.0 as +0.0.
    bits = T.reinterpret(x, "uint32")
    return T.if_then_else(x != x, T.uint32(0xFFFFFFFF), T.if_then_else(
        x == 0, T.uint32(0x80000000),
        T.if_then_else(bits >= T.uint32(0x80000000), bits ^ T.uint32(0xFFFFFFFF), bits | T.uint32(0x80000000))))


@T.macro
def radix_round(L, row, start, valid, threads, hist, above, chosen, need, prefix, mask, threshold, shift, by_column):
    # One byte of the select: the histogram of the byte at `shift` of every candidate (keys
    # whose bytes above match `prefix` under `mask`; in a column round, keys equal to
    # `threshold` whose column rank matches), then the bin where the candidates from the top
    # reach `need`. Leaves prefix and mask with the byte fixed and need less the keys above it.
    tx = T.get_thread_binding()
    for b in T.serial(T.ceildiv(BINS, threads)):
        if b * threads + tx < BINS:
            hist[b * threads + tx] = 0
    T.sync_threads()
    for i in T.serial(T.ceildiv(valid, threads)):
        j = i * threads + tx
        if j < valid:
            key = order_key(L[row, start + j])
            # a column round ranks the lowest column highest
            digits = T.if_then_else(by_column, T.uint32(MAX_COLUMNS - 1) - T.Cast("uint32", j), key)
            if (by_column == 0 or key == threshold) and (digits & mask) == prefix:
                T.atomic_add(hist[T.Cast("int32", (digits >> shift) & T.uint32(BINS - 1))], 1)
    T.sync_threads()
    T.cumsum(hist, above, dim=0, reverse=True)
    T.sync_threads()
    for b in T.serial(T.ceildiv(BINS, threads)):
        bin_ = b * threads + tx
        if bin_ < BINS:
            higher = T.if_then_else(bin_ == BINS - 1, 0, above[T.min(bin_ + 1, BINS - 1)])
            if above[bin_] >= need and higher < need:
                chosen[0] = bin_
                chosen[1] = higher
                chosen[2] = hist[bin_]
    T.sync_threads()
    prefix = prefix | (T.Cast("uint32", chosen[0]) << shift)
    mask = mask | (T.uint32(BINS - 1) << shift)
    need = need - chosen[1]
    T.sync_threads()
