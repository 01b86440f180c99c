"""Top-k selection for DeepSeek Sparse Attention: each row's k largest logits among its valid
keys [ks, ke), as int32 column indices, by a radix select rather than a sort.

A block takes a row. Logits become 32-bit keys that order as the floats do; four rounds of an
8-bit histogram over the row fix the k-th largest key T a byte at a time, each round among the
keys that match the bytes fixed so far. A last pass writes every key above T and as many equal
to T as the k need. The tie rule: among keys equal to T, the lowest columns are taken. Where
more keys equal T than are taken, up to three more rounds over the columns' bits (lowest
first) find the last column taken. NaN ranks above +inf (as torch.topk's does) and -0.0 ties
+0.0. A row with k or fewer valid keys gives them all, in column order, then -1.
"""

import tilec
import tilec.language as T
from tilec import capture

from ..device import config_for

BINS = 256  # a round's histogram: one byte of the key
MAX_COLUMNS = 1 << 24  # the tie rounds read a column's low 24 bits
CONFIG = dict(threads=512)
CPU_CONFIG = dict(threads=128)


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


@tilec.jit(out_idx=[-1])
def topk_kernel(rows, cols, k, threads=512):
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

    return main


@tilec.jit(out_idx=[-1])
def physical_slots_kernel(rows, k, next_n, max_pages, page_size, threads=128):
    # Out[r, i]: the cache slot of column Columns[r, i] of row r (sequence r // next_n): its page
    # from the block table, times the page size, plus its place in the page; -1 stays -1, and
    # so does a column past the table.
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


def topk_indices(logits, k, ks=None, ke=None, block_table=None, next_n=1, page_size=64):
    """The column indices of each row's k largest logits among its valid keys, int32 [S, k].

    logits [S, N] float32. Row t's valid keys are columns ks[t] <= s < ke[t] (int32 [S] each;
    left out: 0 and N; cut to [0, N]). A row with more than k valid keys gives k indices in no
    set order; with k or fewer, all of them in column order, then -1. Ties at the k-th largest
    value take the lowest columns. N is below 2^24.

    Decoding's variant: with block_table (int32 [S / next_n, max_pages], row t's sequence
    t // next_n), each index is the column's physical cache slot, block_table[sequence,
    column // page_size] * page_size + column % page_size, as sparse_mla_decode takes."""
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
    bounds = []
    for name, given, default in (("ks", ks, 0), ("ke", ke, N)):
        if given is None:
            given = _filled(logits, S, default)
        elif capture.tensor_dtype_name(given) != "int32" or tuple(given.shape) != (S,):
            raise ValueError(f"{name} must be int32 of shape ({S},), not {capture.tensor_dtype_name(given)} "
                             f"of shape {tuple(given.shape)}")
        bounds.append(given)
    if block_table is not None:
        if isinstance(next_n, bool) or not isinstance(next_n, int) or next_n < 1 or S % next_n:
            raise ValueError(f"next_n must be a positive int dividing the {S} rows, not {next_n!r}")
        table = tuple(block_table.shape)
        if capture.tensor_dtype_name(block_table) != "int32" or len(table) != 2 or table[0] != S // next_n:
            raise ValueError(f"block_table must be int32 [{S // next_n}, max_pages], not "
                             f"{capture.tensor_dtype_name(block_table)} of shape {table}")
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise ValueError(f"page_size must be a positive int, not {page_size!r}")
    config = config_for(logits, gpu=CONFIG, cpu=CPU_CONFIG)
    columns = topk_kernel(S, N, k, **config)(logits, *bounds)
    if block_table is None:
        return columns
    return physical_slots_kernel(S, k, next_n, tuple(block_table.shape)[1], page_size)(columns, block_table)


def _filled(like, count, value):
    """An int32 [count] of `value` where `like` lives."""
    if hasattr(like, "new_full"):  # a torch tensor
        import torch  # noqa: PLC0415

        return like.new_full((count,), value, dtype=torch.int32)
    import numpy  # noqa: PLC0415

    return numpy.full((count,), value, numpy.int32)
