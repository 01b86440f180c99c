#!target hip gfx940
#!func main
#!bind T = module(tilec.language)
#!bind cols = 131072
#!bind k = 2048
#!bind rows = 4096
#!bind select = func(select)
#!bind COLUMN_BITS = 12
#!bind FIRST_BITS = 12
#!bind HISTOGRAM_BINS = 4096
#!bind MAX_COLUMNS = 16777216
#!bind NEXT_BITS = 10
#!bind candidate_round = func(candidate_round)
#!bind clear_histogram = func(clear_histogram)
#!bind settle_round = func(settle_round)
#!bind choose_bin = func(choose_bin)
#!bind fix_bits = func(fix_bits)
#!bind tally = func(tally)
#!bind candidates = 4096
#!bind column_steps = 9
#!bind first_steps = 9
#!bind load_row_part = func(load_row_part)
#!bind next_steps = 9
#!bind order_key = func(order_key)
#!bind row_round = func(row_round)
#!bind take = func(take)
#!bind threads = 512
#!bind top_shift = 20
#!bind unroll = 8
@T.prim_func
def main(L: T.Tensor((rows, cols), "float32"), KS: T.Tensor((rows,), "int32"), KE: T.Tensor((rows,), "int32"),
         Out: T.Tensor((rows, k), "int32")):
    select(L, KS, KE, None, Out)


@T.macro
def select(L, KS, KE, Hist, Out):
    with T.Kernel(rows, threads=threads) as row:
        tx = T.get_thread_binding()
        hist = T.alloc_shared((HISTOGRAM_BINS,), "int32")
        partial = T.alloc_shared((threads,), "int32")  # the scan's sums of each thread's bins
        chosen = T.alloc_shared((3,), "int32")  # a round's bin, the keys above it, in it
        counters = T.alloc_shared((2,), "int32")  # keys written to Out, candidates kept
        keys = T.alloc_shared((candidates,), "uint32")
        columns = T.alloc_shared((candidates,), "int32")
        values = T.alloc_local((unroll,), "float32")
        total = T.alloc_var("int32", 0)
        seen = T.alloc_var("int32", 0)
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
            if Hist is not None:
                T.copy(Hist[row, 0:HISTOGRAM_BINS], hist)
                settle_round(hist, partial, total, seen, chosen, need, prefix, mask, top_shift, HISTOGRAM_BINS,
                             threads, first_steps)
            else:
                row_round(L, row, start, valid, threads, unroll, values, hist, partial, total, seen, chosen,
                          need, prefix, mask, T.uint32(0), top_shift, FIRST_BITS, 0, first_steps)
            in_bin = T.alloc_var("int32", chosen[2])
            # the keys above the bin are taken; the bin's are the candidates
            if tx < 2:
                counters[tx] = 0
            T.sync_threads()
            for part in T.serial(T.ceildiv(valid, threads * unroll)):
                load_row_part(L, row, start, valid, part, threads, unroll, values)
                for u in T.unroll(unroll):
                    j = (part * unroll + u) * threads + tx
                    key = order_key(values[u])
                    if j < valid and (key & mask) > prefix:
                        take(Out, row, counters, start + j)
                    if j < valid and (key & mask) == prefix and in_bin <= candidates:
                        kept_at = T.atomic_add(counters[1], 1, return_prev=True)
                        if kept_at < candidates:  # (a given histogram may have counted fewer)
                            keys[kept_at] = key
                            columns[kept_at] = j
            T.sync_threads()
            threshold = T.alloc_var("uint32", 0)
            # the last column taken among keys equal to the threshold: all of them, unless
            # more equal it than are needed
            last_column = T.alloc_var("int32", valid)
            if in_bin <= candidates:
                for r in T.serial(2):
                    candidate_round(keys, columns, in_bin, threads, hist, partial, total, seen, chosen, need,
                                    prefix, mask, T.uint32(0), NEXT_BITS - r * NEXT_BITS, NEXT_BITS, 0,
                                    next_steps)
                threshold = prefix
                if need < chosen[2]:
                    prefix = 0
                    mask = 0
                    for r in T.serial(2):
                        candidate_round(keys, columns, in_bin, threads, hist, partial, total, seen, chosen, need,
                                        prefix, mask, threshold, COLUMN_BITS - r * COLUMN_BITS, COLUMN_BITS, 1,
                                        column_steps)
                    last_column = MAX_COLUMNS - 1 - T.Cast("int32", prefix)
                for i in T.serial(T.ceildiv(in_bin, threads)):
                    c = i * threads + tx
                    if c < in_bin:
                        if keys[c] > threshold or (keys[c] == threshold and columns[c] <= last_column):
                            take(Out, row, counters, start + columns[c])
            else:
                for r in T.serial(2):
                    row_round(L, row, start, valid, threads, unroll, values, hist, partial, total, seen, chosen,
                              need, prefix, mask, T.uint32(0), NEXT_BITS - r * NEXT_BITS, NEXT_BITS, 0, next_steps)
                threshold = prefix
                if need < chosen[2]:
                    prefix = 0
                    mask = 0
                    for r in T.serial(2):
                        row_round(L, row, start, valid, threads, unroll, values, hist, partial, total, seen,
                                  chosen, need, prefix, mask, threshold, COLUMN_BITS - r * COLUMN_BITS,
                                  COLUMN_BITS, 1, column_steps)
                    last_column = MAX_COLUMNS - 1 - T.Cast("int32", prefix)
                for part in T.serial(T.ceildiv(valid, threads * unroll)):
                    load_row_part(L, row, start, valid, part, threads, unroll, values)
                    for u in T.unroll(unroll):
                        j = (part * unroll + u) * threads + tx
                        key = order_key(values[u])
                        if j < valid and (key >> top_shift) == (threshold >> top_shift):
                            if key > threshold or (key == threshold and j <= last_column):
                                take(Out, row, counters, start + j)


@T.macro
def candidate_round(keys, columns, count, threads, hist, partial, total, seen, chosen, need, prefix, mask, threshold,
                    shift, bits, by_column, scan_steps):
    # One round of the select over the candidates kept in shared memory.
    tx = T.get_thread_binding()
    bins = 1 << bits
    clear_histogram(hist, bins)
    for i in T.serial(T.ceildiv(count, threads)):
        c = i * threads + tx
        if c < count:
            tally(hist, keys[c], columns[c], prefix, mask, threshold, shift, bins, by_column)
    T.sync_threads()
    settle_round(hist, partial, total, seen, chosen, need, prefix, mask, shift, bins, threads, scan_steps)


@T.macro
def clear_histogram(hist, bins):
    T.fill(hist[0:bins], 0)
    T.sync_threads()


@T.macro
def settle_round(hist, partial, total, seen, chosen, need, prefix, mask, shift, bins, threads, scan_steps):
    # The round's histogram counted: its bin joins the prefix.
    choose_bin(hist, partial, total, seen, chosen, need, bins, T.max(bins // threads, 1), scan_steps)
    fix_bits(chosen, need, prefix, mask, shift, bins)


@T.macro
def choose_bin(hist, partial, total, seen, chosen, need, bins, per_thread, scan_steps):
    # The bin where the counts from the top first reach `need`: chosen[0] the bin, chosen[1]
    # the count in the bins above it, chosen[2] its own. Each thread sums `per_thread` bins; a
    # suffix scan over those sums finds the thread whose bins hold the crossing, and it walks
    # them.
    tx = T.get_thread_binding()
    groups = bins // per_thread
    if tx < groups:
        total = 0
        for b in T.serial(per_thread):
            total = total + hist[tx * per_thread + b]
        partial[tx] = total
    T.sync_threads()
    for s in T.serial(scan_steps):
        if tx < groups:
            total = partial[tx] + T.if_then_else(tx + (1 << s) < groups, partial[T.min(tx + (1 << s), groups - 1)], 0)
        T.sync_threads()
        if tx < groups:
            partial[tx] = total
        T.sync_threads()
    if tx < groups:
        seen = T.if_then_else(tx + 1 < groups, partial[T.min(tx + 1, groups - 1)], 0)
        if partial[tx] >= need and seen < need:
            total = -1  # the bin, once found
            for b in T.serial(per_thread):
                bin_ = tx * per_thread + per_thread - 1 - b
                if total < 0:
                    if seen + hist[bin_] >= need:
                        total = bin_
                    else:
                        seen = seen + hist[bin_]
            chosen[0] = total
            chosen[1] = seen
            chosen[2] = hist[total]
    T.sync_threads()


@T.macro
def fix_bits(chosen, need, prefix, mask, shift, bins):
    # The round's bin joins the prefix; need drops by the keys above it.
    prefix = prefix | (T.Cast("uint32", chosen[0]) << shift)
    mask = mask | (T.uint32(bins - 1) << shift)
    need = need - chosen[1]
    T.sync_threads()


@T.macro
def tally(hist, key, column, prefix, mask, threshold, shift, bins, by_column):
    # Counts one candidate into the round's histogram: a key whose bits above `shift` match
    # `prefix` under `mask`; in a column round, a key equal to `threshold` whose column digits
    # match (the lowest column ranks highest).
    digits = T.if_then_else(by_column, T.uint32(MAX_COLUMNS - 1) - T.Cast("uint32", column), key)
    if (by_column == 0 or key == threshold) and (digits & mask) == prefix:
        T.atomic_add(hist[T.Cast("int32", (digits >> shift) & T.uint32(bins - 1))], 1)


@T.macro
def load_row_part(L, row, start, valid, part, threads, unroll, values):
    # A thread's `unroll` keys of part `part` of the row (column part * unroll * threads + u *
    # threads + tx), loaded before any is used; a column past the row reads its last key.
    tx = T.get_thread_binding()
    for u in T.unroll(unroll):
        values[u] = L[row, start + T.min((part * unroll + u) * threads + tx, valid - 1)]


@T.macro
def order_key(x):
    # A float32's 32-bit key, ordered as the floats are: the sign bit flipped for positives, every
    # bit for negatives; NaN the largest, -0.0 as +0.0.
    bits = T.reinterpret(x, "uint32")
    return T.if_then_else(x != x, T.uint32(0xFFFFFFFF), T.if_then_else(
        x == 0, T.uint32(0x80000000),
        T.if_then_else(bits >= T.uint32(0x80000000), bits ^ T.uint32(0xFFFFFFFF), bits | T.uint32(0x80000000))))


@T.macro
def row_round(L, row, start, valid, threads, unroll, values, hist, partial, total, seen, chosen, need, prefix, mask,
              threshold, shift, bits, by_column, scan_steps):
    # One round of the select over the whole row (from global memory).
    tx = T.get_thread_binding()
    bins = 1 << bits
    clear_histogram(hist, bins)
    for part in T.serial(T.ceildiv(valid, threads * unroll)):
        load_row_part(L, row, start, valid, part, threads, unroll, values)
        for u in T.unroll(unroll):
            j = (part * unroll + u) * threads + tx
            if j < valid:
                tally(hist, order_key(values[u]), j, prefix, mask, threshold, shift, bins, by_column)
    T.sync_threads()
    settle_round(hist, partial, total, seen, chosen, need, prefix, mask, shift, bins, threads, scan_steps)


@T.macro
def take(Out, row, counters, column):
    # Out's next slot of the row (counters[0] counts them) gets `column`.
    slot = T.atomic_add(counters[0], 1, return_prev=True)
    Out[row, slot] = column
