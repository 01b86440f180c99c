"""Sparse MLA prefill on Hopper with the steps split between two warpgroups (a "seesaw", as
TileLang's sparse_mla_fwd_seesaw example calls it), in the order of FlashMLA's sparse prefill:
sparse_mla.py's computation, 384 threads (512 with two gathering warpgroups).

sparse_mla_hopper.py's kernel leaves every score gemm and every softmax to warpgroup 0, and only
the right half of P V to warpgroup 1: warpgroup 0 carries 6.8 of each step's 8.9 MFLOP and the
softmax. Here each consumer warpgroup takes every other step (warpgroup 0 the even steps, in
stage 0; warpgroup 1 the odd, in stage 1) and one half of O's columns. Row maxima are kept in
exp2's units (score x scale) from a finite start, so that a row with no valid key yet rescales
by 1, never by exp2(-inf - -inf), and move only where a step's rise more than 2^8 above them
(the Hopper kernel's lazy rescale), so that most steps rescale no row of O. A pair of steps goes:

- warpgroup 0 has its step's scores already (issued at the end of the last pair, under its
  last product); it takes its rows' max m0 over them and the last pair's, hands m0 to
  warpgroup 1, and multiplies its P (at m0, from registers) into its half of O. Meanwhile
  warpgroup 1 scores its own step;
- warpgroup 1 takes the pair's max m over m0 and its step, hands it back, leaves its P (at m) in
  shared memory and multiplies it into its half of O from registers;
- warpgroup 0 leaves its P, brought from m0 to m, over its stage's RoPE columns (whose scores
  are done: block_I, tail_dim and block_H are all 64), brings its half of O to m, multiplies
  warpgroup 1's P into it and, under that product, issues the next pair's score gemm;
- warpgroup 1 multiplies warpgroup 0's P into its half.

So one warpgroup's softmax always runs under the other's gemms. Each keeps the denominator of
its own steps; the two are added at the end. Warpgroup 2 gathers the keys in the order the
consumers free and read them: stage 0's left half (free once warpgroup 0's own product is
done), stage 1's right part (warpgroup 1's scores start there), stage 0's right part, stage
1's left half (free once warpgroup 0's last product is done). A pair of steps needs both: the
kernel takes an even number of steps (topk a multiple of 2 * block_I).

sparse_mla_decode_seesaw_kernel is the FP8 decode with the same consumers and a producer that
dequantizes the cache (opt-in: slower than the split Hopper decode so far, docs/dsa.md).
"""

import tilec
import tilec.language as T

from ..attention import FAST_MATH, LAZY_MAX_RISE, LOG2E, rescale_moved_rows
from .fp8_cache import FP8_DIM, FP8_GROUP, FP8_TAIL, FP8_TOKEN_BYTES
from .sparse_indices import token_and_head_block
from .sparse_mla_hopper import (CONSUMER_THREADS, SHARED_BYTES, THREADS_A_ROW, THREADS_A_TOKEN, copy_rope, gather_rows,
                                load_tokens, mark_key_bias, step_indices, store_key_bias, store_lse,
                                store_values)

SEESAW_CONFIG = dict(block_H=64, block_I=64)
START_MAX = -1e30  # a row's max before any valid key, in exp2's units: finite, so factors from it are 1


def seesaw_fits(dim, tail_dim, topk, block_H=64, block_I=64):
    """Whether sparse_mla_prefill_seesaw_kernel takes this shape: warpgroup 0's P over the RoPE
    columns (64 heads, 64 keys a step, 64 RoPE dims), each half of the value whole 64-wide
    panels, pairs of steps, and Q, two stages of keys and warpgroup 1's P in shared memory."""
    shared = 2 * ((block_H + 2 * block_I) * (dim + tail_dim) + block_H * block_I) + 2048
    return (block_H == block_I == tail_dim and dim % 128 == 0 and topk % (2 * block_I) == 0
            and shared <= SHARED_BYTES)


@T.macro
def consumer_registers(block_H, block_I, half):
    # A consumer warpgroup's step scores, its P in bfloat16, its half of O (0) and its row
    # statistics: the max (START_MAX), a step's max, the rescale factor, a step's row sums, the
    # denominator (0), lse.
    scores = T.alloc_fragment((block_H, block_I), "float32")
    probs = T.alloc_fragment((block_H, block_I), "bfloat16")
    acc = T.alloc_fragment((block_H, half), "float32")
    row_max, step_max, rescale, row_sum, denominator, lse = (T.alloc_fragment((block_H,), "float32") for _ in range(6))
    T.fill(acc, 0)
    T.fill(denominator, 0)
    T.fill(row_max, START_MAX)
    return scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, lse


@T.macro
def add_key_bias(scores, key_bias, stage, block_H, block_I):
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] += key_bias[stage, i]


@T.macro
def issue_scores(Q_shared, KV_shared, scores, keys_ready, stage, part, phase, clear, half):
    # The score gemm over one part of a stage (0: the value's left half; 1: the rest), once it
    # has landed; left in flight.
    first, last = (0, half) if part == 0 else (half, KV_shared.shape[2])
    T.barrier_wait(keys_ready[2 * stage + part], phase)
    T.gemm(Q_shared[:, first:last], KV_shared[stage, :, first:last], scores, transpose_B=True, clear_accum=clear,
           wg_wait=-1)


@T.macro
def own_p(scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, max_shared, max_ready, own, scale,
          block_H, block_I, half):
    # This warpgroup's max over its step's scores and what it takes in (warpgroup 0: its own
    # last max; warpgroup 1: warpgroup 0's) handed to the other warpgroup, then its P at that max
    # (in place in scores, and in bfloat16 in probs), and its half of O and denominator brought
    # from its last max to it. The max moves only where the step's rises more than
    # 2^LAZY_MAX_RISE above it (lazy_row_max_step's rule), so that the factor is mostly 1 and
    # rescale_moved_rows skips the row.
    T.reduce_max(scores, step_max, dim=1)
    for h in T.Parallel(block_H):
        step_max[h] = T.if_then_else(
            step_max[h] * scale - (row_max[h] if own == 0 else max_shared[0, h]) > LAZY_MAX_RISE,
            step_max[h] * scale, row_max[h] if own == 0 else max_shared[0, h])
        rescale[h] = T.if_then_else(step_max[h] == row_max[h], 1, T.exp2(row_max[h] - step_max[h]))
        row_max[h] = step_max[h]
    T.copy(row_max, max_shared[own, :])
    T.barrier_arrive(max_ready[own])
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] = T.exp2(scores[h, i] * scale - row_max[h])
    T.reduce_sum(scores, row_sum, dim=1)
    for h in T.Parallel(block_H):
        denominator[h] = denominator[h] * rescale[h] + row_sum[h]
    rescale_moved_rows(acc, rescale, block_H, half)
    T.copy(scores, probs)


@T.macro
def first_pair_step(Q_shared, KV_shared, key_bias, max_shared, P1_shared, keys_ready, keys_free, max_ready, p_ready,
                    scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, r, pairs, scale, block_H,
                    block_I, dim, half):
    # Warpgroup 0's part of pair r, its step's scores in `scores` (issued under the last pair's
    # product; the first pair's here); the next pair's score gemm goes under its last product.
    if r == 0:
        issue_scores(Q_shared, KV_shared, scores, keys_ready, 0, 0, 0, True, half)
        issue_scores(Q_shared, KV_shared, scores, keys_ready, 0, 1, 0, False, half)
        T.wait_wgmma(0)
    add_key_bias(scores, key_bias, 0, block_H, block_I)
    own_p(scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, max_shared, max_ready, 0, scale,
          block_H, block_I, half)  # at m0
    T.gemm(probs, KV_shared[0, :, 0:half], acc)
    T.barrier_arrive(keys_free[0])  # stage 0's left half: the next pair's first gathers
    T.barrier_wait(max_ready[1], r & 1)  # the pair's max m: this step's P, its sums and O from m0 to m
    for h in T.Parallel(block_H):
        rescale[h] = T.if_then_else(max_shared[1, h] == row_max[h], 1, T.exp2(row_max[h] - max_shared[1, h]))
        row_max[h] = max_shared[1, h]
        denominator[h] *= rescale[h]
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] *= rescale[h]
    T.copy(scores, KV_shared[0, :, dim:dim + block_I])  # P over stage 0's RoPE columns (stmatrix)
    T.fence_proxy_async()
    T.barrier_arrive(p_ready[0])
    rescale_moved_rows(acc, rescale, block_H, half)
    T.barrier_wait(p_ready[1], r & 1)
    T.gemm(P1_shared, KV_shared[1, :, 0:half], acc, wg_wait=-1)
    if r + 1 < pairs:
        issue_scores(Q_shared, KV_shared, scores, keys_ready, 0, 0, (r + 1) & 1, True, half)
        T.wait_wgmma(1)
        T.barrier_arrive(keys_free[2])  # stage 1's left half
        issue_scores(Q_shared, KV_shared, scores, keys_ready, 0, 1, (r + 1) & 1, False, half)
        T.wait_wgmma(0)
    else:
        T.wait_wgmma(0)
        T.barrier_arrive(keys_free[2])


@T.macro
def second_pair_step(Q_shared, KV_shared, key_bias, max_shared, P1_shared, keys_ready, keys_free, max_ready, p_ready,
                     scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, r, scale, block_H, block_I,
                     dim, half):
    # Warpgroup 1's part of pair r: its step's scores (the stage's right part first, the part
    # freed first), its P at the pair's max, both P times its half of the value.
    issue_scores(Q_shared, KV_shared, scores, keys_ready, 1, 1, r & 1, True, half)
    issue_scores(Q_shared, KV_shared, scores, keys_ready, 1, 0, r & 1, False, half)
    T.wait_wgmma(0)
    add_key_bias(scores, key_bias, 1, block_H, block_I)
    T.barrier_wait(max_ready[0], r & 1)
    own_p(scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, max_shared, max_ready, 1, scale,
          block_H, block_I, half)  # at m
    T.copy(scores, P1_shared)
    T.fence_proxy_async()
    T.barrier_arrive(p_ready[1])
    T.gemm(probs, KV_shared[1, :, half:dim], acc, wg_wait=-1)
    T.barrier_wait(p_ready[0], r & 1)
    T.gemm(KV_shared[0, :, dim:dim + block_I], KV_shared[0, :, half:dim], acc, wg_wait=-1)
    T.wait_wgmma(1)
    T.barrier_arrive(keys_free[3])  # stage 1's right part
    T.wait_wgmma(0)
    T.barrier_arrive(keys_free[1])  # stage 0's right part, with warpgroup 0's P


@T.macro
def finish(acc, denominator, sum_shared, row_max, lse, finished, own, block_H, half):
    # The denominator of both warpgroups' steps; O over it, and the natural log-sum-exp: +inf
    # (and O 0) for a row that had no valid key, as FlashMLA gives.
    T.copy(denominator, sum_shared[own, :])
    T.barrier_arrive(finished[own])
    T.barrier_wait(finished[1 - own], 0)
    for h in T.Parallel(block_H):
        denominator[h] = denominator[h] + sum_shared[1 - own, h]
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))
    for h, d in T.Parallel(block_H, half):
        acc[h, d] = T.if_then_else(denominator[h] > 0, acc[h, d] / denominator[h], 0)


@T.macro
def seesaw_steps(own, Q_shared, KV_shared, key_bias, max_shared, sum_shared, P1_shared, keys_ready, keys_free,
                 max_ready, p_ready, finished, pairs, scale, block_H, block_I, dim, half):
    # Consumer warpgroup `own`: each pair's step in stage `own` (warpgroup 0 the first, 1 the
    # second); returns its half of O (own 0: the left), over the denominators, and lse.
    scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, lse = \
        consumer_registers(block_H, block_I, half)
    if own == 0:
        for r in T.serial(pairs):
            first_pair_step(Q_shared, KV_shared, key_bias, max_shared, P1_shared, keys_ready, keys_free, max_ready,
                            p_ready, scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, r, pairs,
                            scale, block_H, block_I, dim, half)
    else:
        for r in T.serial(pairs):
            second_pair_step(Q_shared, KV_shared, key_bias, max_shared, P1_shared, keys_ready, keys_free, max_ready,
                             p_ready, scores, probs, acc, row_max, step_max, rescale, row_sum, denominator, r, scale,
                             block_H, block_I, dim, half)
    finish(acc, denominator, sum_shared, row_max, lse, finished, own, block_H, half)
    return acc, lse


@T.macro
def gather_pairs(Indices, KV, KV_shared, key_bias, keys_ready, keys_free, t, pairs, topk, seq_kv, block_I, half,
                 producer_threads):
    # The producer (warpgroups 2..): each pair's indexed key rows into the two stages, a part at a
    # time (keys_ready / keys_free[2 * stage + part]) in the order the consumers free and read them.
    # The next pair's indices are loaded under this pair's gathers: loaded right before their
    # first use, the producer waited on them (ncu: 11% of its samples).
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    width = KV_shared.shape[2]
    rows = block_I * THREADS_A_ROW // producer_threads
    rows_index = [T.alloc_local((rows,), "int32") for _ in range(2)]
    next_index = [T.alloc_local((rows,), "int32") for _ in range(2)]
    for stage in (0, 1):
        step_indices(Indices, t, stage, rows_index[stage], lane, topk, seq_kv, block_I, THREADS_A_ROW, producer_threads)
    for r in T.serial(pairs):
        for stage, part in ((0, 0), (1, 1), (0, 1), (1, 0)):
            T.barrier_wait(keys_free[2 * stage + part], (r & 1) ^ 1)
            if part == 0:
                mark_key_bias(rows_index[stage], key_bias, stage, lane, producer_threads)
                gather_rows(KV, 0, rows_index[stage], KV_shared, stage, lane, 0, half, producer_threads)
            else:
                gather_rows(KV, half, rows_index[stage], KV_shared, stage, lane, half, width - half, producer_threads)
            T.cp_async_barrier_noinc(keys_ready[2 * stage + part])
            T.barrier_arrive(keys_ready[2 * stage + part])  # with part 0, releases the key biases
            if stage == 0 and part == 0:
                for next_stage in (0, 1):  # (-1 past the last pair)
                    step_indices(Indices, t, 2 * r + 2 + next_stage, next_index[next_stage], lane, topk, seq_kv,
                                 block_I, THREADS_A_ROW, producer_threads)
        for stage in (0, 1):
            for j in T.unroll(rows):
                rows_index[stage][j] = next_index[stage][j]


@T.macro
def seesaw_attend(Q, Out, LSE, t, h0, pairs, scale, block_H, block_I, dim, tail_dim, decode_s_q=None,
                  producer_threads=CONSUMER_THREADS, consumer_max_nreg=200):
    # The consumer warpgroups of a program: token t's heads h0.. attend to each pair's keys in
    # the two stages the producer (producer_threads threads, each arriving at q_ready and at
    # keys_ready twice) fills; O goes to Out and the rows' lse to LSE (a decode's [B, heads,
    # s_q] with decode_s_q). Returns what the producer fills: Q_shared (by TMA) and q_ready; the
    # stages, their key biases (0, or -inf for an invalid key) and their mbarriers.
    width, half = dim + tail_dim, dim // 2
    Q_shared = T.alloc_shared((block_H, width), "bfloat16")
    KV_shared = T.alloc_shared((2, block_I, width), "bfloat16")
    P1_shared = T.alloc_shared((block_H, block_I), "bfloat16")
    key_bias = T.alloc_shared((2, block_I), "float32")
    max_shared = T.alloc_shared((2, block_H), "float32")
    sum_shared = T.alloc_shared((2, block_H), "float32")
    # q_ready: Q landed; keys_ready / keys_free[2 * stage + part]: a part of a stage's keys (and
    # with part 0, its validity) landed / the consumer that read it last is done with it: stage
    # 0's left half warpgroup 0 (its scores and its own product), its right part warpgroup 1
    # (the right half of the value, and warpgroup 0's P over the RoPE columns), stage 1's left
    # half warpgroup 0 (warpgroup 1's P times it), its right part warpgroup 1;
    # max_ready[w]: warpgroup w's max is in max_shared[w]; p_ready[w]: its P is in shared
    # memory; finished[w]: its denominator is in sum_shared[w]
    q_ready = T.alloc_barrier(producer_threads)
    keys_ready = T.alloc_barrier([2 * producer_threads] * 4)
    keys_free = T.alloc_barrier([CONSUMER_THREADS] * 4)
    max_ready = T.alloc_barrier([CONSUMER_THREADS] * 2)
    p_ready = T.alloc_barrier([CONSUMER_THREADS] * 2)
    finished = T.alloc_barrier([CONSUMER_THREADS] * 2)
    with T.ws(0):
        T.set_max_nreg(consumer_max_nreg, 1)
        T.barrier_wait(q_ready, 0)
        acc_left, lse = seesaw_steps(0, Q_shared, KV_shared, key_bias, max_shared, sum_shared, P1_shared, keys_ready,
                                     keys_free, max_ready, p_ready, finished, pairs, scale, block_H, block_I, dim,
                                     half)
        T.copy(acc_left, Out[t, h0:h0 + block_H, 0:half])
        store_lse(LSE, lse, t, h0, block_H, decode_s_q)
    with T.ws(1):
        T.set_max_nreg(consumer_max_nreg, 1)
        T.barrier_wait(q_ready, 0)
        acc_right, _ = seesaw_steps(1, Q_shared, KV_shared, key_bias, max_shared, sum_shared, P1_shared, keys_ready,
                                    keys_free, max_ready, p_ready, finished, pairs, scale, block_H, block_I, dim, half)
        T.copy(acc_right, Out[t, h0:h0 + block_H, half:dim])
    return Q_shared, q_ready, KV_shared, key_bias, keys_ready, keys_free


@T.macro
def load_q(Q, Q_shared, q_ready, t, h0, block_H):
    # The producer's first task: token t's heads h0.. by TMA
    T.tma_copy(Q[t, h0:h0 + block_H, :], Q_shared, barrier=q_ready)
    T.barrier_arrive(q_ready)


def check_seesaw(dim, tail_dim, topk, block_H, block_I):
    if not seesaw_fits(dim, tail_dim, topk, block_H, block_I):
        raise ValueError(f"the seesaw kernels take block_H = block_I = tail_dim, dim a multiple of 128 and topk a "
                         f"multiple of 2 * block_I (pairs of steps), not dim {dim}, tail_dim {tail_dim}, topk {topk}, "
                         f"block_H {block_H}, block_I {block_I} (seesaw_fits)")


def producer_warpgroups(producers, what):
    """The producer's threads, and the registers a consumer and a producer thread get: the block's
    64 K over (200 + 200 + 104) x 128 threads, or (200 + 200 + 56 + 56) x 128 (at 72 or 88, one
    producer warpgroup spilled)."""
    if isinstance(producers, bool) or producers not in (1, 2) or not isinstance(producers, int):
        raise ValueError(f"producers is the seesaw {what} warpgroups, 1 or 2, not {producers!r}")
    return producers * CONSUMER_THREADS, 200, (104 if producers == 1 else 56)


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_seesaw_kernel(heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64, producers=1):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    # The query and key counts are read at each call: one kernel for every length. producers:
    # the gathering warpgroups (1 or 2; 384 or 512 threads).
    check_seesaw(dim, tail_dim, topk, block_H, block_I)
    producer_threads, consumer_max_nreg, producer_max_nreg = producer_warpgroups(producers, "prefill's gathering")
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")
    pairs = topk // (2 * block_I)

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
             Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq * T.ceildiv(heads, block_H), threads=2 * CONSUMER_THREADS + producer_threads) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            h0 = hb * block_H
            Q_shared, q_ready, KV_shared, key_bias, keys_ready, keys_free = seesaw_attend(
                Q, Out, LSE, t, h0, pairs, sm_scale * LOG2E, block_H, block_I, dim, tail_dim, None, producer_threads,
                consumer_max_nreg)
            with T.ws(2, 1 + producers):  # warpgroup 2, or 2 and 3
                T.set_max_nreg(producer_max_nreg, 0)
                load_q(Q, Q_shared, q_ready, t, h0, block_H)
                gather_pairs(Indices, KV, KV_shared, key_bias, keys_ready, keys_free, t, pairs, topk, seq_kv, block_I,
                             dim // 2, producer_threads)

    return main


@T.macro
def dequantize_pairs(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, pairs, topk, slots,
                     block_I, producer_threads):
    # The seesaw decode's producer (warpgroups 2..): each pair's tokens dequantized into the two
    # stages a part at a time, in gather_pairs' order (the order the consumers free them): part
    # 0 the left half of the values and the key biases, part 1 the right half and the RoPE dims.
    # A part's bytes (half a step's: 32 registers a thread of one warpgroup, 16 of two) are
    # loaded before the wait for it to be free, so they wait on memory under the consumers'
    # work; the next pair's slots under this pair's: under its first part with one warpgroup,
    # its third with two (under the first, ptxas spilled a register of the 56 each thread has).
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    rounds = block_I * THREADS_A_TOKEN // producer_threads
    slots_after_part = 0 if producer_threads == CONSUMER_THREADS else 1  # of stage 0
    chunks = FP8_DIM // (2 * THREADS_A_TOKEN * 16)  # of 16 bytes, a thread's in half a token
    slot_of = [T.alloc_local((rounds,), "int32") for _ in range(2)]
    next_slot_of = [T.alloc_local((rounds,), "int32") for _ in range(2)]
    raw = T.alloc_local((rounds, chunks, 16), "uint8")
    group_scales = T.alloc_local((rounds, FP8_DIM // FP8_GROUP), "bfloat16")
    for stage in (0, 1):
        step_indices(Indices, t, stage, slot_of[stage], lane, topk, slots, block_I, THREADS_A_TOKEN)
    for r in T.serial(pairs):
        for stage, part in ((0, 0), (1, 1), (0, 1), (1, 0)):
            load_tokens(Cache, Scales, slot_of[stage], raw, group_scales, lane, part * chunks)
            T.barrier_wait(keys_free[2 * stage + part], (r & 1) ^ 1)
            if part == 0:
                store_key_bias(slot_of[stage], key_bias, stage, lane)
            else:
                copy_rope(Cache, Rope, slot_of[stage], KV_shared, stage, lane)
            store_values(raw, group_scales, KV_shared, stage, lane, part * chunks, chunks, 0)
            # the dequantized values are the generic proxy's stores; wgmma reads them through
            # the async proxy
            T.fence_proxy_async()
            T.cp_async_barrier_noinc(keys_ready[2 * stage + part])
            T.barrier_arrive(keys_ready[2 * stage + part])  # with part 0, releases the key biases
            if stage == 0 and part == slots_after_part:
                for next_stage in (0, 1):  # (-1 past the last pair)
                    step_indices(Indices, t, 2 * r + 2 + next_stage, next_slot_of[next_stage], lane, topk, slots,
                                 block_I, THREADS_A_TOKEN)
        for stage in (0, 1):
            for j in T.unroll(rounds):
                slot_of[stage][j] = next_slot_of[stage][j]


@tilec.jit(out_idx=[5, 6], pass_configs=FAST_MATH)
def sparse_mla_decode_seesaw_kernel(s_q, heads, topk, sm_scale, block_H=64, block_I=64, producers=1):
    """The FP8 sparse decode (sparse_mla_hopper.sparse_mla_decode_hopper_kernel's arguments and
    results) with the seesaw's consumers: the producer (`producers` warpgroups, 1 or 2, each
    thread 4 or 2 tokens a pair) dequantizes each pair's tokens a part at a time in the order
    they are freed. topk a multiple of 2 * block_I."""
    check_seesaw(FP8_DIM, FP8_TAIL, topk, block_H, block_I)
    producer_threads, consumer_max_nreg, producer_max_nreg = producer_warpgroups(producers, "decode's dequantizing")
    tokens, slots = T.symbolic("tokens"), T.symbolic("slots")
    dim, tail_dim = FP8_DIM, FP8_TAIL
    pairs = topk // (2 * block_I)

    @T.prim_func
    def main(Q: T.Tensor((tokens, heads, dim + tail_dim), "bfloat16"),
             Cache: T.Tensor((slots, FP8_TOKEN_BYTES), "uint8"),
             Scales: T.Tensor((slots, FP8_TOKEN_BYTES // 4), "float32"),
             Rope: T.Tensor((slots, 1, FP8_TOKEN_BYTES // 2), "bfloat16"), Indices: T.Tensor((tokens, topk), "int32"),
             Out: T.Tensor((tokens, heads, dim), "bfloat16"), LSE: T.Tensor((tokens // s_q, heads, s_q), "float32")):
        with T.Kernel(tokens * T.ceildiv(heads, block_H), threads=2 * CONSUMER_THREADS + producer_threads) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            h0 = hb * block_H
            Q_shared, q_ready, KV_shared, key_bias, keys_ready, keys_free = seesaw_attend(
                Q, Out, LSE, t, h0, pairs, sm_scale * LOG2E, block_H, block_I, dim, tail_dim, s_q, producer_threads,
                consumer_max_nreg)
            with T.ws(2, 1 + producers):  # warpgroup 2, or 2 and 3
                T.set_max_nreg(producer_max_nreg, 0)
                load_q(Q, Q_shared, q_ready, t, h0, block_H)
                dequantize_pairs(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, pairs,
                                 topk, slots, block_I, producer_threads)

    return main
