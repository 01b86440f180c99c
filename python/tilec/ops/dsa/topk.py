"""Top-k selection for DeepSeek Sparse Attention: each row's k largest logits among its valid
keys [ks, ke), as int32 column indices, by a radix select rather than a sort.

A block takes a row. Logits become 32-bit keys that order as the floats do. The first round
makes a histogram of the keys' top 12 bits, which fixes the bin B where the k-th largest key T
lies. Two rounds of 10 bits over B's keys fix T, and a last pass writes the keys above T and as
many equal to T as the k need.

The row is read once where it can be. A sample of it (`unroll` runs of `threads` keys, spread
over the row) guesses a bin G that about `guess_margin` * k of the row's keys reach, and the
pass that makes the histogram keeps every key of bin G or above, with its column, in shared
memory. Where G <= B and they all fit, the later rounds and the last pass work on those alone.
Otherwise (a sample unlike the row, or too many keys, many equal logits say) the row is read a
second time, which writes the keys above B and keeps B's; should B hold more keys than shared
memory does, the rounds and the last pass read the row again instead: slower, same result.

The tie rule: among keys equal to T, the lowest columns are taken. Where more keys equal T
than are taken, two more rounds over the columns' bits (lowest column first) find the last
column taken. NaN ranks above +inf (as torch.topk's does) and -0.0 ties +0.0. A row with k or
fewer valid keys gives them all, in column order, then -1.
"""

import tilec
import tilec.language as T
from tilec import capture

from ..device import config_for, for_device_of

FIRST_BITS = 12  # the first round's histogram: the keys' top 12 bits
NEXT_BITS = 10  # each later round's: 10 more bits of the key (two rounds), or 12 of a column (two)
COLUMN_BITS = 12
HISTOGRAM_BINS = 1 << FIRST_BITS  # the first round's: a row's keys by their top 12 bits
MAX_COLUMNS = 1 << (2 * COLUMN_BITS)  # the tie rounds read a column's low 24 bits
GUESS_MARGIN = 2  # the sample's bin G is one that about twice the k keys of the row reach
# 8192 candidates: 82 KiB of shared memory a block, so two blocks an SM, as its 52 registers a thread allow
CONFIG = dict(threads=512, candidates=8192, unroll=8)
AMD_CONFIG = dict(threads=512, candidates=4096, unroll=8)  # 64 KiB of LDS a block
CPU_CONFIG = dict(threads=128, candidates=1024, unroll=2)


@T.macro
def order_key(x):
    # A float32's 32-bit key, ordered as the floats are: the sign bit flipped for positives, every
    # bit for negatives; NaN the largest, -0.0 as +0.0.
    bits = T.reinterpret(x, "uint32")
    return T.if_then_else(x != x, T.uint32(0xFFFFFFFF), T.if_then_else(
        x == 0, T.uint32(0x80000000),
        T.if_then_else(bits >= T.uint32(0x80000000), bits ^ T.uint32(0xFFFFFFFF), bits | T.uint32(0x80000000))))


@T.macro
def load_row_part(L, row, start, valid, part, threads, unroll, values):
    # A thread's `unroll` keys of part `part` of the row (column part * unroll * threads + u *
    # threads + tx), loaded before any is used; a column past the row reads its last key.
    tx = T.get_thread_binding()
    for u in T.unroll(unroll):
        values[u] = L[row, start + T.min((part * unroll + u) * threads + tx, valid - 1)]


@T.macro
def tally(hist, key, column, prefix, mask, threshold, shift, bins, by_column):
    # Counts one candidate into the round's histogram: a key whose bits above `shift` match
    # `prefix` under `mask`; in a column round, a key equal to `threshold` whose column digits
    # match (the lowest column ranks highest).
    digits = T.if_then_else(by_column, T.uint32(MAX_COLUMNS - 1) - T.Cast("uint32", column), key)
    if (by_column == 0 or key == threshold) and (digits & mask) == prefix:
        T.atomic_add(hist[T.Cast("int32", (digits >> shift) & T.uint32(bins - 1))], 1)


@T.macro
def clear_histogram(hist, bins):
    T.fill(hist[0:bins], 0)
    T.sync_threads()


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
def settle_round(hist, partial, total, seen, chosen, need, prefix, mask, shift, bins, threads, scan_steps):
    # The round's histogram counted: its bin joins the prefix.
    choose_bin(hist, partial, total, seen, chosen, need, bins, T.max(bins // threads, 1), scan_steps)
    fix_bits(chosen, need, prefix, mask, shift, bins)


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
def guess_bin(L, row, start, valid, reaching, threads, unroll, values, hist, partial, total, seen, chosen, steps):
    # chosen[0]: the bin that about `reaching` of the row's keys reach, by a sample of them:
    # `unroll` runs of `threads` consecutive keys spread over the row (the whole row when it is
    # shorter than threads * unroll keys).
    tx = T.get_thread_binding()
    stride = T.max(valid // unroll, threads)  # where each run starts; runs never overlap
    clear_histogram(hist, HISTOGRAM_BINS)
    for u in T.unroll(unroll):
        values[u] = L[row, start + T.min(u * stride + tx, valid - 1)]
    for u in T.unroll(unroll):
        if u * stride + tx < valid:
            tally(hist, order_key(values[u]), 0, T.uint32(0), T.uint32(0), T.uint32(0), 32 - FIRST_BITS,
                  HISTOGRAM_BINS, 0)
    T.sync_threads()
    sample = T.min(valid, threads * unroll)
    wanted = T.Cast("int32", (T.Cast("int64", reaching) * sample + valid - 1) // valid)
    choose_bin(hist, partial, total, seen, chosen, T.min(wanted, sample), HISTOGRAM_BINS,
               T.max(HISTOGRAM_BINS // threads, 1), steps)


@T.macro
def keep(keys, columns, counters, key, column, candidates):
    # A candidate into shared memory (counters[1] counts them, kept or not).
    kept_at = T.atomic_add(counters[1], 1, return_prev=True)
    if kept_at < candidates:
        keys[kept_at] = key
        columns[kept_at] = column


@T.macro
def take(Out, row, counters, column):
    # Out's next slot of the row (counters[0] counts them) gets `column`.
    slot = T.atomic_add(counters[0], 1, return_prev=True)
    Out[row, slot] = column


@tilec.jit(out_idx=[-1])
def topk_kernel(k, threads=512, candidates=8192, unroll=8, histogram=False, guess_margin=GUESS_MARGIN):
    # candidates: the keys that shared memory keeps; unroll: the row's keys a thread loads at
    # once. histogram: the kernel takes Hist [rows, HISTOGRAM_BINS], each row's first-round
    # histogram (indexer_logits(..., histogram=True) makes it), and reads the row once.
    # guess_margin: the sampled bin's keys, in k's (0: no sample; the row is read twice).
    # The row and column counts are read at each call.
    if threads & (threads - 1) or threads < 32 or candidates < 1 or unroll < 1 or guess_margin < 0:
        raise ValueError(f"top-k needs a power-of-two threads >= 32, candidates >= 1, unroll >= 1 and "
                         f"guess_margin >= 0, not {threads}, {candidates}, {unroll} and {guess_margin}")
    # the suffix scan's steps for a round of 2^bits bins: log2 of the threads' sums it takes
    first_steps = min(FIRST_BITS, threads.bit_length() - 1)
    next_steps = min(NEXT_BITS, threads.bit_length() - 1)
    column_steps = min(COLUMN_BITS, threads.bit_length() - 1)
    top_shift = 32 - FIRST_BITS
    reaching = max(round(guess_margin * k), 1)  # the row's keys that the guessed bin should reach
    rows, cols = T.symbolic("rows"), T.symbolic("cols")

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
                # how many candidates shared memory holds: all of the first round's bin's keys, or
                # more than `candidates` where it does not hold them
                count = T.alloc_var("int32", candidates + 1)
                if Hist is not None:
                    T.copy(Hist[row, 0:HISTOGRAM_BINS], hist)
                    settle_round(hist, partial, total, seen, chosen, need, prefix, mask, top_shift, HISTOGRAM_BINS,
                                 threads, first_steps)
                elif guess_margin > 0:
                    guess_bin(L, row, start, valid, reaching, threads, unroll, values, hist,
                              partial, total, seen, chosen, first_steps)
                    guess = T.alloc_var("int32", chosen[0])
                    if tx < 2:
                        counters[tx] = 0
                    clear_histogram(hist, HISTOGRAM_BINS)
                    # the first round, keeping the keys of the guessed bin and above
                    for part in T.serial(T.ceildiv(valid, threads * unroll)):
                        load_row_part(L, row, start, valid, part, threads, unroll, values)
                        for u in T.unroll(unroll):
                            j = (part * unroll + u) * threads + tx
                            key = order_key(values[u])
                            if j < valid:
                                tally(hist, key, j, prefix, mask, T.uint32(0), top_shift, HISTOGRAM_BINS, 0)
                                if T.Cast("int32", key >> top_shift) >= guess:
                                    keep(keys, columns, counters, key, j, candidates)
                    T.sync_threads()
                    settle_round(hist, partial, total, seen, chosen, need, prefix, mask, top_shift, HISTOGRAM_BINS,
                                 threads, first_steps)
                    if chosen[0] >= guess and counters[1] <= candidates:
                        count = counters[1]
                    T.sync_threads()  # the counters read, before a second pass resets them
                else:
                    row_round(L, row, start, valid, threads, unroll, values, hist, partial, total, seen, chosen,
                              need, prefix, mask, T.uint32(0), top_shift, FIRST_BITS, 0, first_steps)
                if count > candidates:
                    # a second pass: the keys above the bin are taken; the bin's are the candidates
                    count = chosen[2]
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
                            # (keep() stops at `candidates`: a given histogram may have counted fewer)
                            if j < valid and (key & mask) == prefix and count <= candidates:
                                keep(keys, columns, counters, key, j, candidates)
                    T.sync_threads()
                threshold = T.alloc_var("uint32", 0)
                # the last column taken among keys equal to the threshold: all of them, unless
                # more equal it than are needed
                last_column = T.alloc_var("int32", valid)
                if count <= candidates:
                    for r in T.serial(2):
                        candidate_round(keys, columns, count, threads, hist, partial, total, seen, chosen, need,
                                        prefix, mask, T.uint32(0), NEXT_BITS - r * NEXT_BITS, NEXT_BITS, 0,
                                        next_steps)
                    threshold = prefix
                    if need < chosen[2]:
                        prefix = 0
                        mask = 0
                        for r in T.serial(2):
                            candidate_round(keys, columns, count, threads, hist, partial, total, seen, chosen, need,
                                            prefix, mask, threshold, COLUMN_BITS - r * COLUMN_BITS, COLUMN_BITS, 1,
                                            column_steps)
                        last_column = MAX_COLUMNS - 1 - T.Cast("int32", prefix)
                    for i in T.serial(T.ceildiv(count, threads)):
                        c = i * threads + tx
                        if c < count:
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

    if histogram:
        @T.prim_func
        def main(L: T.Tensor((rows, cols), "float32"), KS: T.Tensor((rows,), "int32"),
                 KE: T.Tensor((rows,), "int32"), Hist: T.Tensor((rows, HISTOGRAM_BINS), "int32"),
                 Out: T.Tensor((rows, k), "int32")):
            select(L, KS, KE, Hist, Out)

        return main

    @T.prim_func
    def main(L: T.Tensor((rows, cols), "float32"), KS: T.Tensor((rows,), "int32"), KE: T.Tensor((rows,), "int32"),
             Out: T.Tensor((rows, k), "int32")):
        select(L, KS, KE, None, Out)

    return main


@tilec.jit(out_idx=[-1])
def physical_slots_kernel(k, next_n, page_size, threads=128):
    # Out[r, i]: the cache slot of column Columns[r, i] of row r (sequence r // next_n): its page
    # from the block table, times the page size, plus its place in the page; -1 stays -1, and
    # so does a column past the table. The row count and the table's width are read at each call.
    rows, max_pages = T.symbolic("rows"), T.symbolic("max_pages")

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

    return main


def topk_indices(logits, k, ks=None, ke=None, block_table=None, next_n=1, page_size=64, out=None, histogram=None):
    """The column indices of each row's k largest logits among its valid keys, int32 [S, k].

    logits [S, N] float32. Row t's valid keys are columns ks[t] <= s < ke[t] (int32 [S] each;
    left out: 0 and N; cut to [0, N]). A row with more than k valid keys gives k indices in no
    set order; with k or fewer, all of them in column order, then -1. Ties at the k-th largest
    value take the lowest columns. N is below 2^24.

    Decoding's variant: with block_table (int32 [S / next_n, max_pages], row t's sequence
    t // next_n), each index is the column's physical cache slot, block_table[sequence,
    column // page_size] * page_size + column % page_size, as sparse_mla_decode takes.

    With out (int32 [S, k]), it writes the indices there instead and returns it.

    With histogram (int32 [S, 4096], from indexer_logits(..., histogram=True) over the same
    ranges), the logits are read once, not twice: the histogram is the first round's. One that
    counts other keys gives wrong indices, never a read or write outside the tensors."""
    shape = tuple(logits.shape)
    if len(shape) != 2:
        raise ValueError(f"logits must have 2 dims [S, N], not {len(shape)}: {shape}")
    if capture.tensor_dtype_name(logits) != "float32":
        raise ValueError(f"logits must be float32, not {capture.tensor_dtype_name(logits)}")
    S, N = shape
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, not {k!r}")
    if not 1 <= N < MAX_COLUMNS or S < 1:
        raise ValueError(f"logits must have at least one row and 1 to {MAX_COLUMNS - 1} columns, not {shape}")
    inputs = []
    for name, given, default in (("ks", ks, 0), ("ke", ke, N)):
        if given is None:
            given = _filled(logits, S, default)
        elif capture.tensor_dtype_name(given) != "int32" or tuple(given.shape) != (S,):
            raise ValueError(f"{name} must be int32 of shape ({S},), not {capture.tensor_dtype_name(given)} "
                             f"of shape {tuple(given.shape)}")
        inputs.append(given)
    if block_table is not None:
        if isinstance(next_n, bool) or not isinstance(next_n, int) or next_n < 1 or S % next_n:
            raise ValueError(f"next_n must be a positive int dividing the {S} rows, not {next_n!r}")
        table = tuple(block_table.shape)
        if capture.tensor_dtype_name(block_table) != "int32" or len(table) != 2 or table[0] != S // next_n:
            raise ValueError(f"block_table must be int32 [{S // next_n}, max_pages], not "
                             f"{capture.tensor_dtype_name(block_table)} of shape {table}")
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a positive int, not {page_size!r}")
    if histogram is not None:
        if capture.tensor_dtype_name(histogram) != "int32" or tuple(histogram.shape) != (S, HISTOGRAM_BINS):
            raise ValueError(f"histogram must be int32 of shape ({S}, {HISTOGRAM_BINS}), not "
                             f"{capture.tensor_dtype_name(histogram)} of shape {tuple(histogram.shape)}")
        inputs.append(histogram)
    config = config_for(logits, gpu=CONFIG, amd=AMD_CONFIG, cpu=CPU_CONFIG)
    select = for_device_of(logits, topk_kernel)(k, histogram=histogram is not None, **config)
    if block_table is not None:
        slots = for_device_of(logits, physical_slots_kernel)(k, next_n, page_size)
        if out is None:
            return slots(select(logits, *inputs), block_table)
        slots(select(logits, *inputs), block_table, out)
        return out
    if out is None:
        return select(logits, *inputs)
    select(logits, *inputs, out)
    return out


def _filled(like, count, value):
    """An int32 [count] of `value` where `like` lives."""
    if hasattr(like, "new_full"):  # a torch tensor
        import torch  # noqa: PLC0415

        return like.new_full((count,), value, dtype=torch.int32)
    import numpy  # noqa: PLC0415

    return numpy.full((count,), value, numpy.int32)
