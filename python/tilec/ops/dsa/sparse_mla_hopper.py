"""Sparse MLA on Hopper, warp-specialized: sparse_mla.py's prefill and FP8-cache decode (its
docstring says what they compute), with a program's 384 threads split in three warpgroups that
hand work to each other through mbarriers, so the tensor cores, the softmax and the loads overlap:

- warpgroup 0 computes a step's scores (all block_I keys of the block_H heads, one wgmma chain),
  their online softmax, and the left half of O += P V;
- warpgroup 1 computes the right half of O += P V from the P and the rescale factors warpgroup 0
  leaves in shared memory, while warpgroup 0 goes on to the next step's scores;
- warpgroup 2 fills two stages of bfloat16 keys: the prefill's by cp.async gathers of the
  indexed rows; the decode's by loading each indexed token of the FP8 cache and dequantizing it
  (FlashMLA's sparse decode does the same), its RoPE dims by cp.async.

No row reduction crosses warpgroups: a row's softmax lives in warpgroup 0 alone. TileLang's
sparse_mla_fwd_pipelined example splits its work the same way.
"""

import tilec
import tilec.language as T

from ..attention import FAST_MATH, LOG2E, lazy_row_max_step, rescale_moved_rows, row_exp_step
from .fp8_cache import FP8_DIM, FP8_GROUP, FP8_ROPE_AT, FP8_TAIL, FP8_TOKEN_BYTES
from .sparse_indices import index_at, token_and_head_block

HOPPER_CONFIG = dict(block_H=64, block_I=64)
# the decode's default: warpgroup 1 dequantizes half of each step, 0.46x cuBLAS bf16 against
# 0.43x (H100, bench/RESULTS.md, forty-fourth session), and the producer prefetches the step
# after next into L2, 0.50x against 0.48x (forty-sixth session)
HOPPER_DECODE_CONFIG = dict(HOPPER_CONFIG, split_dequant=True)
CONSUMER_THREADS = 128  # a warpgroup
CHUNK = 8  # bfloat16 elements a cp.async moves (16 bytes)
THREADS_A_ROW = 8  # producer threads that fill one key row together
THREADS_A_TOKEN = 4  # FP8 decode producer threads that dequantize one token together
# The split decode's producer prefetches a token into L2 from 2 threads, 3 lines each: a token's
# 656 bytes start a multiple of 16 bytes into a 128-byte line, so span at most 6 lines, and the
# lines holding its bytes 0, 128, .., 640 are those 6. One slot a thread (4 threads a token took
# two) leaves the producer 72 registers (80 before) and warpgroup 0 its 232.
PREFETCH_THREADS_A_TOKEN = 2
PREFETCH_LINES = 6


SHARED_BYTES = 227 * 1024  # a Hopper block's shared memory


def hopper_fits(dim, tail_dim, block_H=64, block_I=64):
    """Whether the Hopper kernels take this shape: each half of the value a whole number of
    64-wide swizzle panels (so each of the two value gemms reads whole panels), and Q, two
    stages of keys and P in shared memory (DeepSeek's 512 + 64 dims take 225 KiB)."""
    width = dim + tail_dim
    shared = 2 * (block_H * width + 2 * block_I * width + block_H * block_I) + 2048  # and key biases, factors, barriers
    return dim % 128 == 0 and tail_dim % 64 == 0 and shared <= SHARED_BYTES


@T.macro
def filled_row(j, lane, threads_a_row=THREADS_A_ROW, producer_threads=CONSUMER_THREADS):
    # The key row of a step that this producer thread fills in its j-th round: threads_a_row
    # threads a row, producer_threads // threads_a_row rows a round.
    return j * (producer_threads // threads_a_row) + lane // threads_a_row


@T.macro
def step_indices(Indices, t, step, rows_index, lane, topk, keys, block_I, threads_a_row=THREADS_A_ROW,
                 producer_threads=CONSUMER_THREADS):
    # The indices of the rows this producer thread fills in step `step`, -1 where invalid.
    for j in T.unroll(rows_index.shape[0]):
        rows_index[j] = index_at(Indices, t, step * block_I + filled_row(j, lane, threads_a_row, producer_threads),
                                 topk, keys)


@T.macro
def mark_key_bias(rows_index, key_bias, stage, lane, producer_threads=CONSUMER_THREADS):
    for j in T.unroll(rows_index.shape[0]):
        key_bias[stage, filled_row(j, lane, THREADS_A_ROW, producer_threads)] = T.if_then_else(
            rows_index[j] >= 0, 0, -T.infinity("float32"))


@T.macro
def gather_rows(KV, src_first, rows_index, KV_shared, stage, lane, first, count, producer_threads=CONSUMER_THREADS):
    # This thread's part of columns [first, first + count) of a step's rows, from columns
    # src_first.. of the keys rows_index names: CHUNK elements a cp.async, zeros for an invalid key.
    for j in T.unroll(rows_index.shape[0]):
        row = filled_row(j, lane, THREADS_A_ROW, producer_threads)
        for c in T.unroll(T.ceildiv(count // CHUNK, THREADS_A_ROW)):
            column = (c * THREADS_A_ROW + lane % THREADS_A_ROW) * CHUNK
            if column < count:
                T.ptx_cp_async(T.access_ptr(KV_shared[stage, row, first + column], "w", CHUNK),
                               T.access_ptr(KV[T.max(rows_index[j], 0), 0, src_first + column], "r", CHUNK), CHUNK,
                               predicate=rows_index[j] >= 0)


@T.macro
def gather_stages(Indices, KV, KV_shared, key_bias, keys_ready, keys_free, t, steps, topk, seq_kv, block_I, half):
    # Warpgroup 2 of a prefill: each step's indexed key rows into its stage (two, in turn), in
    # two parts with a barrier each (keys_ready / keys_free[2 * stage + part]): columns 0..half,
    # the value's left half, once the stage's last rows are done with it, then the rest. The
    # score gemm starts on the first part while the second lands, and each part is refilled
    # as soon as the warpgroup that multiplies it by P is done with it.
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    width = KV_shared.shape[2]
    rows = block_I * THREADS_A_ROW // CONSUMER_THREADS
    rows_index = T.alloc_local((rows,), "int32")
    next_index = T.alloc_local((rows,), "int32")
    step_indices(Indices, t, 0, rows_index, lane, topk, seq_kv, block_I)
    for r in T.serial(T.ceildiv(steps, 2)):
        for stage in T.unroll(2):
            if r * 2 + stage < steps:
                T.barrier_wait(keys_free[2 * stage], (r & 1) ^ 1)
                mark_key_bias(rows_index, key_bias, stage, lane)
                gather_rows(KV, 0, rows_index, KV_shared, stage, lane, 0, half)
                T.cp_async_barrier_noinc(keys_ready[2 * stage])
                T.barrier_arrive(keys_ready[2 * stage])  # releases the key biases
                # the next step's indices, loaded under this step's gathers (read one by one
                # between cp.asyncs, the gathers ran 22% slower; right before the step's wait,
                # the producer still waited on them: ncu, session 43)
                step_indices(Indices, t, r * 2 + stage + 1, next_index, lane, topk, seq_kv, block_I)
                T.barrier_wait(keys_free[2 * stage + 1], (r & 1) ^ 1)
                gather_rows(KV, half, rows_index, KV_shared, stage, lane, half, width - half)
                T.cp_async_barrier_noinc(keys_ready[2 * stage + 1])
                T.barrier_arrive(keys_ready[2 * stage + 1])
                for j in T.unroll(rows):
                    rows_index[j] = next_index[j]


@T.macro
def stage_scores(Q_shared, KV_shared, scores, keys_ready, stage, phase, half):
    # A step's scores over its stage's two parts, each gemm once its part has landed.
    width = KV_shared.shape[2]
    T.barrier_wait(keys_ready[2 * stage], phase)
    T.gemm(Q_shared[:, 0:half], KV_shared[stage, :, 0:half], scores, transpose_B=True, clear_accum=True, wg_wait=-1)
    T.barrier_wait(keys_ready[2 * stage + 1], phase)
    T.gemm(Q_shared[:, half:width], KV_shared[stage, :, half:width], scores, transpose_B=True, wg_wait=-1)
    T.wait_wgmma(0)


@T.macro
def scores_and_left_half(Q_shared, KV_shared, key_bias, P_shared, rescale_shared, inverse_shared, scores, acc_left,
                         row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready,
                         keys_free, p_ready, p_free, finished, steps, scale, block_H, block_I, half, crossover, unit=0):
    # Warpgroup 0, once Q is in Q_shared: every step's scores and softmax, and the left half of
    # O, over the denominators when it returns; lse, each row's natural log-sum-exp (+inf, with
    # O 0, for a row that had no valid key, as FlashMLA gives). In a crossover (see
    # sparse_mla_decode_hopper_kernel) a stage part is free once both programs are done with it.
    # unit: the program's how-manieth work unit this is (a persistent program's; an even step
    # count a unit), which the barriers' phases count from.
    T.fill(acc_left, 0)
    T.fill(denominator, 0)
    T.fill(row_max, -T.infinity("float32"))
    for r in T.serial(T.ceildiv(steps, 2)):
        for stage in T.unroll(2):
            if r * 2 + stage < steps:
                stage_scores(Q_shared, KV_shared, scores, keys_ready, stage, (unit * (steps // 2) + r) & 1, half)
                for h, i in T.Parallel(block_H, block_I):
                    scores[h, i] += key_bias[stage, i]
                if unit * steps + r * 2 + stage > 0:  # warpgroup 1 has read the last step's P
                    T.barrier_arrive(p_free)
                    T.barrier_wait(p_free, (r * 2 + stage - 1) & 1)
                lazy_row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_H)
                rescale_moved_rows(acc_left, rescale, block_H, half)
                row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I)
                T.copy(rescale, rescale_shared)
                T.copy(scores, P_shared)
                T.fence_proxy_async()
                T.barrier_arrive(p_ready)
                T.gemm(P_shared, KV_shared[stage, :, 0:half], acc_left)
                T.barrier_arrive(keys_free[2 * stage])
                if crossover:
                    T.mbarrier_arrive(keys_free[2 * stage], cta_id=1 - T.block_rank_in_cluster())
    for h in T.Parallel(block_H):
        inverse_shared[h] = T.if_then_else(denominator[h] > 0, 1 / denominator[h], 0)
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))
    T.barrier_arrive(finished)
    for h, d in T.Parallel(block_H, half):
        acc_left[h, d] *= inverse_shared[h]


@T.macro
def stream_step(t, step, steps, stream):
    # The token and step of step `step` of token t's work unit. In a persistent program (stream:
    # the unit's number among the program's, the next unit's token, whether the program has
    # one) the steps past a unit's last are the next unit's first ones, and past the program's
    # last unit there are none (step `steps`: -1 indices).
    if stream is None:
        return t, step
    _, t_next, has_next = stream
    return (T.if_then_else(step < steps, t, t_next),
            T.if_then_else(step < steps, step, T.if_then_else(has_next, step - steps, steps)))


def stream_pairs(steps, stream, step_pair):
    # A unit's steps in pairs, step_pair(r, stream) running steps 2r and 2r + 1. Only
    # the last pair of a persistent program's unit (stream, as stream_step's) reaches into the
    # next unit; the pairs before it run with no stream, as a unit alone does, so that their
    # steps address the unit's own token with no select between it and the next unit's.
    if stream is None:
        for r in T.serial(T.ceildiv(steps, 2)):
            step_pair(r, None)
    else:
        for r in T.serial(steps // 2 - 1):
            step_pair(r, None)
        step_pair(steps // 2 - 1, stream)


@T.macro
def before_end(step, steps, stream):
    # Whether step `step` of a unit comes before the program's end (stream as stream_step's).
    if stream is None:
        return step < steps
    return (step < steps) | stream[2]


@T.macro
def load_right_values(fill, t, step, slot_of, raw, group_scales, lane, stream=None):
    # Warpgroup 1's share of step `step`'s tokens (stream_step's) in the split FP8 decode: the
    # slots, then the right half of each token's values (its last raw.shape[1] chunks) and its
    # scales.
    Cache, Scales, _, Indices, topk, slots, block_I, steps = fill
    token, token_step = stream_step(t, step, steps, stream)
    step_indices(Indices, token, token_step, slot_of, lane, topk, slots, block_I, THREADS_A_TOKEN)
    load_tokens(Cache, Scales, slot_of, raw, group_scales, lane, raw.shape[1])


@T.macro
def store_right_part(fill, slot_of, raw, group_scales, KV_shared, keys_ready, stage, lane):
    # The loaded right halves times their scales and the tokens' RoPE dims into the stage's
    # second part, released to warpgroup 0's score gemm.
    Cache, _, Rope = fill[:3]
    store_values(raw, group_scales, KV_shared, stage, lane, raw.shape[1], raw.shape[1], 0)
    copy_rope(Cache, Rope, slot_of, KV_shared, stage, lane)
    T.fence_proxy_async()
    T.cp_async_barrier_noinc(keys_ready[2 * stage + 1])
    T.barrier_arrive(keys_ready[2 * stage + 1])


@T.macro
def right_half(KV_shared, P_shared, rescale_shared, inverse_shared, acc_right, keys_free, p_ready, p_free, finished,
               steps, block_H, half, dim, crossover, fill=None, keys_ready=None, t=None, stream=None):
    # Warpgroup 1: the right half of O, from each step's P and rescale factors, over the
    # denominators when it returns. With `fill` (the FP8 decode's split dequantization: Cache,
    # Scales, Rope, Indices, topk, slots, block_I, steps) and token t, it also fills each
    # stage's second part itself, the part only it multiplies by P: steps 0 and 1's first, then
    # step s + 2's once its product of step s is done, the tokens' bytes loaded under that
    # product. In a persistent program (stream, as stream_step's) a unit's last two steps fill
    # the next unit's first two, so only the program's first unit fills them first.
    T.fill(acc_right, 0)
    if fill is not None:
        lane = T.get_thread_binding() - CONSUMER_THREADS
        rounds = fill[6] * THREADS_A_TOKEN // CONSUMER_THREADS  # block_I's
        slot_of = T.alloc_local((rounds,), "int32")
        raw = T.alloc_local((rounds, FP8_DIM // (2 * THREADS_A_TOKEN * 16), 16), "uint8")
        group_scales = T.alloc_local((rounds, FP8_DIM // FP8_GROUP), "bfloat16")
        unit = 0 if stream is None else stream[0]
        if unit == 0:
            for stage in T.unroll(2):
                if stage < steps:
                    load_right_values(fill, t, stage, slot_of, raw, group_scales, lane)
                    store_right_part(fill, slot_of, raw, group_scales, KV_shared, keys_ready, stage, lane)

    def step_pair(r, stream):
        for stage in T.unroll(2):
            if r * 2 + stage < steps:
                T.barrier_arrive(p_ready)
                T.barrier_wait(p_ready, (r * 2 + stage) & 1)
                rescale_moved_rows(acc_right, rescale_shared, block_H, half)
                if fill is None:
                    T.gemm(P_shared, KV_shared[stage, :, half:dim], acc_right)
                    T.barrier_arrive(keys_free[2 * stage + 1])
                    if crossover:
                        T.mbarrier_arrive(keys_free[2 * stage + 1], cta_id=1 - T.block_rank_in_cluster())
                else:
                    T.gemm(P_shared, KV_shared[stage, :, half:dim], acc_right, wg_wait=-1)
                    load_right_values(fill, t, r * 2 + stage + 2, slot_of, raw, group_scales, lane,
                                      stream)  # (-1 past the end)
                    T.wait_wgmma(0)
                if before_end(r * 2 + stage + 1, steps, stream):
                    T.barrier_arrive(p_free)
                if fill is not None:
                    if before_end(r * 2 + stage + 2, steps, stream):
                        store_right_part(fill, slot_of, raw, group_scales, KV_shared, keys_ready, stage, lane)

    stream_pairs(steps, stream, step_pair)
    T.barrier_wait(finished, 0 if stream is None else stream[0] & 1)
    for h, d in T.Parallel(block_H, half):
        acc_right[h, d] *= inverse_shared[h]


def hopper_buffers(block_H, block_I, width, half, crossover):
    # A program's tiles, fragments and mbarriers. keys_ready[2 * stage + part]: a part of a
    # stage's rows landed (the producer's cp.asyncs) and, for part 0, its validity is written
    # (the producer's arrivals); keys_free: warpgroup 0 is done with part 0 (columns 0..half),
    # warpgroup 1 with part 1; p_ready / p_free: P and the rescale factors in
    # shared memory, handed to warpgroup 1 and back; finished: warpgroup 0's reciprocal
    # denominators are in shared memory. In a crossover keys_ready also waits for the peer
    # program's copies of its rows (part 0: their key biases, then values), and keys_free for
    # the peer's consumers too.
    if crossover:
        keys_ready = T.alloc_cluster_barrier([2 * CONSUMER_THREADS + 2, 2 * CONSUMER_THREADS + 1] * 2)
        keys_free = T.alloc_cluster_barrier([2 * CONSUMER_THREADS] * 4)
    else:
        keys_ready = T.alloc_barrier([2 * CONSUMER_THREADS] * 4)
        keys_free = T.alloc_barrier([CONSUMER_THREADS] * 4)
    return (T.alloc_shared((block_H, width), "bfloat16"), T.alloc_shared((2, block_I, width), "bfloat16"),
            T.alloc_shared((2, block_I), "float32"), T.alloc_shared((block_H, block_I), "bfloat16"),
            T.alloc_shared((block_H,), "float32"), T.alloc_shared((block_H,), "float32"),
            T.alloc_fragment((block_H, block_I), "float32"), T.alloc_fragment((block_H, half), "float32"),
            T.alloc_fragment((block_H, half), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"), keys_ready, keys_free,
            T.alloc_barrier(2 * CONSUMER_THREADS), T.alloc_barrier(2 * CONSUMER_THREADS),
            T.alloc_barrier(CONSUMER_THREADS))


@T.macro
def store_lse(LSE, lse, t, h0, block_H, s_q=None):
    # Token t's rows' lse (heads h0..): into LSE [tokens, heads], or with s_q (the decode) into
    # LSE [B, heads, s_q], FlashMLA's layout.
    if s_q is None:
        T.copy(lse, LSE[t, h0:h0 + block_H])
    else:
        for h in T.Parallel(block_H):
            if h0 + h < LSE.shape[1]:
                LSE[t // s_q, h0 + h, t % s_q] = lse[h]


@T.macro
def unit_count(units):
    # How many work units a persistent program takes (units: the program, the programs, the
    # units, the head blocks a token): units program, program + programs, ...
    program, programs, count, _ = units
    return T.ceildiv(T.max(count - program, 0), programs)


@T.macro
def persistent_unit(units, k):
    # The k-th work unit of a persistent program (units as unit_count's): its token, its head
    # block and its stream (stream_step's).
    program, programs, count, head_blocks = units
    unit = program + k * programs
    t, hb = token_and_head_block(unit, head_blocks)
    has_next = unit + programs < count
    return t, hb, (k, T.if_then_else(has_next, (unit + programs) // head_blocks, t), has_next)


@T.macro
def attend_stages(Q, Out, LSE, t, hb, steps, scale, block_H, block_I, dim, tail_dim, crossover=False, fill=None,
                  s_q=None, units=None):
    # The consumer warpgroups of a program: token t's head block hb attends to each step's keys
    # in the two stages the producer fills, and O and lse go to Out and LSE (store_lse's, s_q
    # too). units: a persistent program's (unit_count's; t and hb are then each unit's). Returns
    # what the producer fills: the stages, their key biases (0, or -inf for an invalid key) and
    # their mbarriers.
    half = dim // 2
    (Q_shared, KV_shared, key_bias, P_shared, rescale_shared, inverse_shared, scores, acc_left, acc_right, row_max,
     row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready, keys_free, p_ready, p_free,
     finished) = hopper_buffers(block_H, block_I, dim + tail_dim, half, crossover)

    def left(t, hb, stream):
        h0 = hb * block_H
        T.copy(Q[t, h0:h0 + block_H, :], Q_shared)
        scores_and_left_half(Q_shared, KV_shared, key_bias, P_shared, rescale_shared, inverse_shared, scores, acc_left,
                             row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready,
                             keys_free, p_ready, p_free, finished, steps, scale, block_H, block_I, half, crossover,
                             0 if stream is None else stream[0])
        T.copy(acc_left, Out[t, h0:h0 + block_H, 0:half])
        store_lse(LSE, lse, t, h0, block_H, s_q)

    def right(t, hb, stream):
        h0 = hb * block_H
        right_half(KV_shared, P_shared, rescale_shared, inverse_shared, acc_right, keys_free, p_ready, p_free,
                   finished, steps, block_H, half, dim, crossover, fill, keys_ready, t, stream)
        T.copy(acc_right, Out[t, h0:h0 + block_H, half:dim])

    with T.ws(0):
        T.set_max_nreg(240 if fill is None else 232, 1)
        if units is None:
            left(t, hb, None)
        else:
            for k in T.serial(unit_count(units)):
                left(*persistent_unit(units, k))
    with T.ws(1):
        T.set_max_nreg(168 if fill is None else 200, 1)  # filling, its loaded bytes beside O's half (spilled at 192)
        if units is None:
            right(t, hb, None)
        else:
            for k in T.serial(unit_count(units)):
                right(*persistent_unit(units, k))
    return KV_shared, key_bias, keys_ready, keys_free


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_hopper_kernel(heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    # The query and key counts are read at each call: one kernel for every length.
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")
    scale = sm_scale * LOG2E
    steps = T.ceildiv(topk, block_I)

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
             Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq * T.ceildiv(heads, block_H), threads=3 * CONSUMER_THREADS) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            KV_shared, key_bias, keys_ready, keys_free = attend_stages(Q, Out, LSE, t, hb, steps, scale, block_H,
                                                                    block_I, dim, tail_dim)
            with T.ws(2):
                T.set_max_nreg(96, 0)  # (240 + 168 + 96) x 128 fit; at 80 it spilled
                gather_stages(Indices, KV, KV_shared, key_bias, keys_ready, keys_free, t, steps, topk, seq_kv, block_I,
                              dim // 2)

    return main


@T.macro
def load_tokens(Cache, Scales, slot_of, raw, group_scales, lane, first_chunk=0):
    # This thread's quarter of its tokens' FP8 values in chunks first_chunk.. (raw.shape[1] of
    # them, 16 bytes at a time, 64 bytes apart) and their 4 scales (rounded to bfloat16, as
    # FlashMLA's are: DeepSeek's are powers of two), into registers: every round's loads go out
    # before any store, so that they wait on memory together. Zeros for an invalid token (slot -1).
    part = lane % THREADS_A_TOKEN
    for round in T.unroll(slot_of.shape[0]):
        slot = slot_of[round]
        safe = T.min(T.max(slot, 0), Cache.shape[0] - 1)
        for g in T.vectorized(FP8_DIM // FP8_GROUP):
            group_scales[round, g] = T.if_then_else(slot >= 0, Scales[safe, FP8_DIM // 4 + g], 0)
        for c in T.unroll(raw.shape[1]):
            for e in T.vectorized(16):
                raw[round, c, e] = T.if_then_else(slot >= 0,
                                                  Cache[safe, ((first_chunk + c) * THREADS_A_TOKEN + part) * 16 + e], 0)


@T.macro
def store_values(raw, group_scales, KV_shared, stage, lane, first_chunk, count, raw_first, first_round=0):
    # This thread's loaded values of chunks first_chunk.. (count of them, raw's from raw_first
    # on) times their group's scale into the stage as bfloat16 (FlashMLA rounds so too), its
    # rounds' rows from round first_round on. An e4m3 times a bfloat16 is exact in float32: on
    # CUDA a pair is one bf16x2 multiply (pair_conversions, e4m3_pair_times).
    part = lane % THREADS_A_TOKEN
    for round in T.unroll(raw.shape[0]):
        row = filled_row(first_round + round, lane, THREADS_A_TOKEN)
        for c in T.unroll(count):
            for e in T.vectorized(16):
                # the chunk's 16 values lie in one group of FP8_GROUP
                KV_shared[stage, row, ((first_chunk + c) * THREADS_A_TOKEN + part) * 16 + e] = T.Cast(
                    "float32", T.reinterpret(raw[round, raw_first + c, e], "float8_e4m3")) * T.Cast(
                    "float32", group_scales[round, ((first_chunk + c) * THREADS_A_TOKEN + part) * 16 // FP8_GROUP])


@T.macro
def store_key_bias(slot_of, key_bias, stage, lane, first_round=0):
    for round in T.unroll(slot_of.shape[0]):
        if lane % THREADS_A_TOKEN == 0:
            key_bias[stage, filled_row(first_round + round, lane, THREADS_A_TOKEN)] = T.if_then_else(
                slot_of[round] >= 0, 0, -T.infinity("float32"))


@T.macro
def copy_rope(Cache, Rope, slot_of, KV_shared, stage, lane):
    # The tokens' RoPE dims by cp.async (zeros for an invalid token).
    part = lane % THREADS_A_TOKEN
    for round in T.unroll(slot_of.shape[0]):
        row = filled_row(round, lane, THREADS_A_TOKEN)
        slot = slot_of[round]
        safe = T.min(T.max(slot, 0), Cache.shape[0] - 1)
        for c in T.unroll(FP8_TAIL // (THREADS_A_TOKEN * CHUNK)):
            rope_column = (c * THREADS_A_TOKEN + part) * CHUNK
            T.ptx_cp_async(T.access_ptr(KV_shared[stage, row, FP8_DIM + rope_column], "w", CHUNK),
                           T.access_ptr(Rope[safe, 0, FP8_ROPE_AT + rope_column], "r", CHUNK), CHUNK,
                           predicate=slot >= 0)


@T.macro
def prefetch_tokens(Cache, slot_of, lane):
    # The tokens of slot_of into L2, PREFETCH_THREADS_A_TOKEN threads a token: thread `part` of
    # a token prefetches the lines holding its bytes part * 128, (part + 2) * 128, ..
    part = lane % PREFETCH_THREADS_A_TOKEN
    for round in T.unroll(slot_of.shape[0]):
        if slot_of[round] >= 0:
            for line in T.unroll(PREFETCH_LINES // PREFETCH_THREADS_A_TOKEN):
                T.prefetch_l2(Cache[slot_of[round], (line * PREFETCH_THREADS_A_TOKEN + part) * 128])


@T.macro
def dequantize_stages(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, steps, topk, slots,
                      block_I, split=False, units=None):
    # Warpgroup 2 of the FP8 decode: each step's tokens loaded, dequantized and stored into its
    # stage (two, in turn), each part released to the consumers once written. split: the
    # first part alone (the values' left half and the key biases); warpgroup 1 fills the second
    # (right_half's `fill`), and the producer prefetches into L2 the tokens of the step after
    # next once the stage is free, so that both warpgroups' loads of them find L2. units: a
    # persistent program's (unit_count's), whose steps run on from one unit into the next.
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    rounds = block_I * THREADS_A_TOKEN // CONSUMER_THREADS
    # the slots of this step's tokens and of the next step's, read a step ahead
    slot_of = T.alloc_local((rounds,), "int32")
    next_slot_of = T.alloc_local((rounds,), "int32")
    raw = T.alloc_local((rounds, FP8_DIM // ((2 if split else 1) * THREADS_A_TOKEN * 16), 16), "uint8")
    group_scales = T.alloc_local((rounds, FP8_DIM // FP8_GROUP), "bfloat16")
    if split:  # the slots of the step after next's tokens this thread prefetches
        ahead_slot_of = T.alloc_local((block_I * PREFETCH_THREADS_A_TOKEN // CONSUMER_THREADS,), "int32")

    def load_step(t, next_step, stream):
        # this step's bytes, and the slots of the next (split: and of the one after)
        load_tokens(Cache, Scales, slot_of, raw, group_scales, lane)
        next_t, token_step = stream_step(t, next_step, steps, stream)
        step_indices(Indices, next_t, token_step, next_slot_of, lane, topk, slots, block_I, THREADS_A_TOKEN)
        if split:
            ahead_t, ahead_step = stream_step(t, next_step + 1, steps, stream)
            step_indices(Indices, ahead_t, ahead_step, ahead_slot_of, lane, topk, slots, block_I,
                         PREFETCH_THREADS_A_TOKEN)

    def unit_steps(t, stream):
        unit = 0 if stream is None else stream[0]

        def step_pair(r, stream):
            phase = (unit * (steps // 2) + r) & 1
            for stage in T.unroll(2):
                if r * 2 + stage < steps:
                    if split:
                        # half the bytes: they fit the producer's 72 registers across the wait
                        # for the stage, so their loads wait on memory under the consumers' step
                        load_step(t, r * 2 + stage + 1, stream)
                        T.barrier_wait(keys_free[2 * stage], phase ^ 1)
                        prefetch_tokens(Cache, ahead_slot_of, lane)
                    else:
                        # both parts free before any load: a step's bytes held across
                        # these waits spilled at the 96 registers this warpgroup has
                        T.barrier_wait(keys_free[2 * stage], phase ^ 1)
                        T.barrier_wait(keys_free[2 * stage + 1], phase ^ 1)
                        load_step(t, r * 2 + stage + 1, stream)
                    # each part released once written (the score gemm starts on the
                    # first): the dequantized values are the generic proxy's stores,
                    # and wgmma reads them through the async proxy
                    store_key_bias(slot_of, key_bias, stage, lane)
                    left = raw.shape[1] if split else raw.shape[1] // 2
                    store_values(raw, group_scales, KV_shared, stage, lane, 0, left, 0)
                    T.fence_proxy_async()
                    T.cp_async_barrier_noinc(keys_ready[2 * stage])
                    T.barrier_arrive(keys_ready[2 * stage])  # releases the key biases and values
                    if not split:
                        copy_rope(Cache, Rope, slot_of, KV_shared, stage, lane)
                        store_values(raw, group_scales, KV_shared, stage, lane, left, left, left)
                        T.fence_proxy_async()
                        T.cp_async_barrier_noinc(keys_ready[2 * stage + 1])
                        T.barrier_arrive(keys_ready[2 * stage + 1])
                    for round in T.unroll(2):
                        slot_of[round] = next_slot_of[round]

        stream_pairs(steps, stream, step_pair)

    if units is None:
        step_indices(Indices, t, 0, slot_of, lane, topk, slots, block_I, THREADS_A_TOKEN)
        unit_steps(t, None)
    else:
        for k in T.serial(unit_count(units)):
            t_k, _, stream = persistent_unit(units, k)
            if k == 0:  # a later unit's first slots are read in the last one's last step
                step_indices(Indices, t_k, 0, slot_of, lane, topk, slots, block_I, THREADS_A_TOKEN)
            unit_steps(t_k, stream)


@T.macro
def dequantize_halves(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, steps, topk, slots,
                      block_I, dim):
    # Warpgroup 2 of the crossover decode: half of each step's tokens (round `rank`'s rows)
    # loaded and dequantized into this program's stage, then copied into the peer's.
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    half_rows = block_I // 2
    rank = T.block_rank_in_cluster()
    peer = 1 - rank
    first = rank * half_rows
    # the slots of all this step's tokens (for their RoPE dims) and of the next
    # step's, read a step ahead; the tokens this program dequantizes are round `rank`'s
    slot_of = T.alloc_local((2,), "int32")
    next_slot_of = T.alloc_local((2,), "int32")
    my_slot = T.alloc_local((1,), "int32")
    raw = T.alloc_local((1, FP8_DIM // (THREADS_A_TOKEN * 16), 16), "uint8")
    group_scales = T.alloc_local((1, FP8_DIM // FP8_GROUP), "bfloat16")
    step_indices(Indices, t, 0, slot_of, lane, topk, slots, block_I, THREADS_A_TOKEN)
    for r in T.serial(T.ceildiv(steps, 2)):
        for stage in T.serial(2):
            if r * 2 + stage < steps:
                T.barrier_wait(keys_free[2 * stage], (r & 1) ^ 1)
                T.barrier_wait(keys_free[2 * stage + 1], (r & 1) ^ 1)
                my_slot[0] = T.if_then_else(rank == 0, slot_of[0], slot_of[1])
                load_tokens(Cache, Scales, my_slot, raw, group_scales, lane)
                step_indices(Indices, t, r * 2 + stage + 1, next_slot_of, lane, topk, slots, block_I,
                             THREADS_A_TOKEN)
                store_key_bias(my_slot, key_bias, stage, lane, rank)
                store_values(raw, group_scales, KV_shared, stage, lane, 0, raw.shape[1] // 2, 0, rank)
                # each part released to this program's consumers once written, then
                # copied to the peer's (which reads it after its own copy's arrival)
                T.fence_proxy_async()
                T.cp_async_barrier_noinc(keys_ready[2 * stage])
                T.barrier_arrive(keys_ready[2 * stage])  # releases the key biases and values
                T.copy_cluster(key_bias[stage, first:first + half_rows],
                               key_bias[stage, first:first + half_rows], dst_block=peer,
                               remote_barrier=keys_ready[2 * stage])
                T.copy_cluster(KV_shared[stage, first:first + half_rows, 0:dim // 2],
                               KV_shared[stage, first:first + half_rows, 0:dim // 2], dst_block=peer,
                               remote_barrier=keys_ready[2 * stage])
                copy_rope(Cache, Rope, slot_of, KV_shared, stage, lane)
                store_values(raw, group_scales, KV_shared, stage, lane, raw.shape[1] // 2, raw.shape[1] // 2,
                             raw.shape[1] // 2, rank)
                T.fence_proxy_async()
                T.cp_async_barrier_noinc(keys_ready[2 * stage + 1])
                T.barrier_arrive(keys_ready[2 * stage + 1])
                T.copy_cluster(KV_shared[stage, first:first + half_rows, dim // 2:dim],
                               KV_shared[stage, first:first + half_rows, dim // 2:dim], dst_block=peer,
                               remote_barrier=keys_ready[2 * stage + 1])
                for round in T.unroll(2):
                    slot_of[round] = next_slot_of[round]


@tilec.jit(out_idx=[5, 6], pass_configs=FAST_MATH)
def sparse_mla_decode_hopper_kernel(s_q, heads, topk, sm_scale, block_H=64, block_I=64, crossover=False,
                                    split_dequant=False, programs=None):
    """The FP8 sparse decode (sparse_mla.py's), warp-specialized. tokens = B * s_q query tokens;
    LSE is [B, heads, s_q], FlashMLA's layout. Cache, Scales and Rope are one cache's bytes
    (fp8_cache.scales_and_rope). The token and cache slot counts are read at each call.

    crossover: FlashMLA's "crossover": the two programs of a token's two head blocks run as a
    thread block cluster and share its keys. Each program's producer dequantizes half of each
    step's tokens (rows rank * block_I / 2 on) into its own stage and copies them into its peer's
    (T.copy_cluster, counted on the peer's keys_ready), so each producer does half the work; a
    stage part is refilled once the consumers of both programs are done with it (they arrive at
    both keys_free barriers); each program fills all the RoPE dims of its stage itself
    (cp.async). It takes heads of a whole number of head-block pairs and block_I 64 (CUDA
    sm_90; the CPU runs it too). Slower than without, so far (docs/dsa.md).

    split_dequant: the producer dequantizes the left half of each step's values alone, and
    warpgroup 1 (otherwise idle most of a step, waiting for P) the right half and the RoPE dims,
    into the stage part only it multiplies by P, loading the bytes under its product of the step
    two back: each warpgroup dequantizes half of what the producer did. The producer also
    prefetches the tokens of the step after next into L2 once a stage is free.

    programs: a persistent launch of that many programs (the GPU's SMs), each taking the work
    units (a token's head block) program, program + programs, ...: the producer and warpgroup 1
    fill a unit's first steps while the consumers finish the last one's. It takes split_dequant
    and an even step count (topk a multiple of 2 * block_I)."""
    if programs is not None:
        if not split_dequant:
            raise ValueError("the persistent decode (programs=) takes split_dequant=True")
        if programs < 1:
            raise ValueError(f"programs is the persistent decode's launch, at least 1 program, not {programs}")
        if -(-topk // block_I) % 2 != 0:
            raise ValueError(f"the persistent decode takes an even step count, topk a multiple of {2 * block_I}: "
                             f"topk {topk} makes {-(-topk // block_I)} steps of {block_I}")
    if crossover and split_dequant:
        raise ValueError("the decode takes crossover=True or split_dequant=True, not both: each halves the producer's "
                         "dequantization its own way")
    if crossover:
        head_blocks = -(-heads // block_H)
        if head_blocks % 2 != 0:
            raise ValueError(f"the crossover decode pairs the head blocks of a token: {heads} heads make {head_blocks} "
                             f"blocks of {block_H}, not an even number")
        if block_I * THREADS_A_TOKEN != 2 * CONSUMER_THREADS:
            raise ValueError(f"the crossover decode's producers each take one round of a step's {block_I} tokens: "
                             f"block_I is {2 * CONSUMER_THREADS // THREADS_A_TOKEN}, not {block_I}")
    tokens, slots = T.symbolic("tokens"), T.symbolic("slots")
    dim, tail_dim = FP8_DIM, FP8_TAIL
    scale = sm_scale * LOG2E
    steps = T.ceildiv(topk, block_I)
    cluster = 2 if crossover else 1

    @T.prim_func
    def main(Q: T.Tensor((tokens, heads, dim + tail_dim), "bfloat16"),
             Cache: T.Tensor((slots, FP8_TOKEN_BYTES), "uint8"),
             Scales: T.Tensor((slots, FP8_TOKEN_BYTES // 4), "float32"),
             Rope: T.Tensor((slots, 1, FP8_TOKEN_BYTES // 2), "bfloat16"), Indices: T.Tensor((tokens, topk), "int32"),
             Out: T.Tensor((tokens, heads, dim), "bfloat16"), LSE: T.Tensor((tokens // s_q, heads, s_q), "float32")):
        head_blocks = T.ceildiv(heads, block_H)
        with T.Kernel(tokens * head_blocks if programs is None else programs, threads=3 * CONSUMER_THREADS,
                      cluster_dims=cluster) as program:
            t, hb = token_and_head_block(program, head_blocks)
            units = None if programs is None else (program, programs, tokens * head_blocks, head_blocks)
            fill = (Cache, Scales, Rope, Indices, topk, slots, block_I, steps) if split_dequant else None
            KV_shared, key_bias, keys_ready, keys_free = attend_stages(Q, Out, LSE, t, hb, steps, scale,
                                                                    block_H, block_I, dim, tail_dim, crossover, fill,
                                                                    s_q, units)
            with T.ws(2):
                # (240 + 168 + 96) x 128 fit, (232 + 200 + 72) too
                T.set_max_nreg(72 if split_dequant else 96, 0)
                if crossover:
                    dequantize_halves(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, steps,
                                      topk, slots, block_I, dim)
                else:
                    dequantize_stages(Cache, Scales, Rope, Indices, KV_shared, key_bias, keys_ready, keys_free, t, steps,
                                      topk, slots, block_I, split_dequant, units)

    return main
