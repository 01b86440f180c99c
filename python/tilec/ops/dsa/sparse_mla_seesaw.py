"""Sparse MLA prefill on Hopper with the steps split between two warpgroups (a "seesaw", as
TileLang's sparse_mla_fwd_seesaw example calls it; FlashMLA's sparse prefill orders its work the
same way): sparse_mla.py's computation, 384 threads.

sparse_mla_hopper.py's kernel leaves every score gemm and every softmax to warpgroup 0, and only
the right half of P V to warpgroup 1: warpgroup 0 carries 6.8 of each step's 8.9 MFLOP and the
softmax. Here each consumer warpgroup takes every other step (warpgroup 0 the even steps, in
stage 0; warpgroup 1 the odd, in stage 1) and one half of O's columns, and a pair of steps goes:

- both score their own step's keys (over the stage's two parts, as the producer fills them);
- warpgroup 0 takes its rows' max over its step and the last pair's (m0), hands it to
  warpgroup 1 and, without waiting, rescales its half of O to m0 and adds its own P (at m0, from
  registers) times its half of V;
- warpgroup 1 takes the pair's max m over m0 and its step, hands it back, rescales its half of
  O to m, adds its own P (at m) times its half of V, and leaves that P over its stage's RoPE
  columns (whose scores are done: block_I, tail_dim and block_H are all 64, and a third stage
  would not fit);
- warpgroup 0 leaves its P, brought from m0 to m, over its own stage's RoPE columns, brings its
  half of O to m, and each multiplies the other's P into its half of O.

So warpgroup 0's first product overlaps warpgroup 1's softmax, and neither waits for the other
before its own step's product. Each keeps the denominator of its own steps; the two are added at
the end. Warpgroup 2 gathers the keys, as in sparse_mla_hopper.py. A pair of steps needs both:
the kernel takes an even number of steps (topk a multiple of 2 * block_I).
"""

import tilec
import tilec.language as T

from ..attention import FAST_MATH, LOG2E, rescale_output, row_exp_step
from .sparse_indices import token_and_head_block
from .sparse_mla_hopper import CONSUMER_THREADS, gather_stages, stage_scores

SEESAW_CONFIG = dict(block_H=64, block_I=64)


def seesaw_fits(dim, tail_dim, topk, block_H=64, block_I=64):
    """Whether sparse_mla_prefill_seesaw_kernel takes this shape: P over the RoPE columns (64
    heads, 64 keys a step, 64 RoPE dims), each half of the value whole 64-wide panels, and
    pairs of steps."""
    return (block_H == block_I == tail_dim and dim % 128 == 0 and topk % (2 * block_I) == 0
            and 2 * (block_H + 2 * block_I) * (dim + tail_dim) + 4096 <= 227 * 1024)


@T.macro
def consumer_registers(block_H, block_I, half):
    # A consumer warpgroup's step scores, its P in bfloat16, its half of O (0) and its row
    # statistics: running max (-inf), the last one, the max used in the exponents (0 for -inf),
    # the rescale factor, a step's row sums, the denominator (0), lse.
    scores = T.alloc_fragment((block_H, block_I), "float32")
    probs = T.alloc_fragment((block_H, block_I), "bfloat16")
    acc = T.alloc_fragment((block_H, half), "float32")
    row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse = \
        (T.alloc_fragment((block_H,), "float32") for _ in range(7))
    T.fill(acc, 0)
    T.fill(denominator, 0)
    T.fill(row_max, -T.infinity("float32"))
    return scores, probs, acc, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse


@T.macro
def masked_scores(Q_shared, KV_shared, key_bias, scores, keys_ready, stage, phase, half, block_H, block_I):
    # A step's scores over its stage's keys, -inf for an invalid key.
    stage_scores(Q_shared, KV_shared, scores, keys_ready, stage, phase, half)
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] += key_bias[stage, i]


@T.macro
def exp_and_sum(scores, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale, block_H,
                block_I):
    # The factor from the last max to row_max (0 from -inf: nothing was summed), the step's
    # P = exp2((scores - row_max) * scale) in place and its rows' sums into the denominator. A row
    # that has seen no key yet keeps a max of -inf: its terms use 0 instead, so that
    # exp2(-inf - -inf) never makes a NaN.
    for h in T.Parallel(block_H):
        row_max_finite[h] = T.if_then_else(row_max[h] == -T.infinity("float32"), 0, row_max[h])
        rescale[h] = T.exp2((row_max_prev[h] - row_max_finite[h]) * scale)
    row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I)


@T.macro
def own_p(scores, probs, acc, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, max_shared,
          max_ready, own, scale, block_H, block_I, half):
    # This warpgroup's max over its step and row_max (what it took in) handed to the other, then
    # its P at that max (probs) and its half of O and denominator brought from row_max_prev to it.
    T.reduce_max(scores, row_max, dim=1, clear=False)
    T.copy(row_max, max_shared[own, :])
    T.barrier_arrive(max_ready[own])
    exp_and_sum(scores, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale, block_H,
                block_I)
    rescale_output(acc, rescale, block_H, half)
    T.copy(scores, probs)


@T.macro
def finish(acc, denominator, sum_shared, row_max, lse, finished, own, scale, block_H, half):
    # The denominator of both warpgroups' steps; O over it, and the natural log-sum-exp: +inf
    # (and O 0) for a row that had no valid key, as FlashMLA gives.
    T.copy(denominator, sum_shared[own, :])
    T.barrier_arrive(finished[own])
    T.barrier_wait(finished[1 - own], 0)
    for h in T.Parallel(block_H):
        denominator[h] = denominator[h] + sum_shared[1 - own, h]
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))
    for h, d in T.Parallel(block_H, half):
        acc[h, d] = T.if_then_else(denominator[h] > 0, acc[h, d] / denominator[h], 0)


@T.macro
def seesaw_steps(own, Q_shared, KV_shared, key_bias, max_shared, sum_shared, keys_ready, keys_free, max_ready, p_ready,
                 finished, pairs, scale, block_H, block_I, dim, half):
    # Consumer warpgroup `own`: each pair's step in stage `own` (warpgroup 0 the first, 1 the
    # second); returns its half of O (own 0: the left), over the denominators, and lse.
    scores, probs, acc, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse = \
        consumer_registers(block_H, block_I, half)
    for r in T.serial(pairs):
        masked_scores(Q_shared, KV_shared, key_bias, scores, keys_ready, own, r & 1, half, block_H, block_I)
        if own == 0:
            T.copy(row_max, row_max_prev)  # the last pair's max
            own_p(scores, probs, acc, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, max_shared,
                  max_ready, own, scale, block_H, block_I, half)  # at m0
            T.gemm(probs, KV_shared[0, :, 0:half], acc, wg_wait=-1)
            # the pair's max m from warpgroup 1: this step's P, its sums and O brought from m0 to m
            T.barrier_wait(max_ready[1], r & 1)
            for h in T.Parallel(block_H):
                # (with m0 -inf, nothing was summed yet)
                rescale[h] = T.if_then_else(row_max[h] == -T.infinity("float32"), 0,
                                            T.exp2((row_max[h] - max_shared[1, h]) * scale))
                row_max[h] = max_shared[1, h]
                denominator[h] *= rescale[h]
            for h, i in T.Parallel(block_H, block_I):
                KV_shared[0, h, dim + i] = scores[h, i] * rescale[h]  # P over stage 0's RoPE columns
            T.fence_proxy_async()
            T.barrier_arrive(p_ready[0])
            T.wait_wgmma(0)
            T.barrier_arrive(keys_free[0])  # stage 0's left half: the next pair's first gathers
            rescale_output(acc, rescale, block_H, half)
            T.barrier_wait(p_ready[1], r & 1)
            T.gemm(KV_shared[1, :, dim:dim + block_I], KV_shared[1, :, 0:half], acc)
            T.barrier_arrive(keys_free[2])
            T.barrier_arrive(keys_free[3])
        else:
            T.barrier_wait(max_ready[0], r & 1)
            for h in T.Parallel(block_H):
                row_max_prev[h] = row_max[h]  # the last pair's max
                row_max[h] = max_shared[0, h]  # m0, which took it in
            own_p(scores, probs, acc, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, max_shared,
                  max_ready, own, scale, block_H, block_I, half)  # at m
            T.copy(probs, KV_shared[1, :, dim:dim + block_I])  # P over stage 1's RoPE columns
            T.fence_proxy_async()
            T.barrier_arrive(p_ready[1])
            T.gemm(probs, KV_shared[1, :, half:dim], acc, wg_wait=-1)
            T.barrier_wait(p_ready[0], r & 1)
            T.gemm(KV_shared[0, :, dim:dim + block_I], KV_shared[0, :, half:dim], acc, wg_wait=-1)
            T.wait_wgmma(0)
            T.barrier_arrive(keys_free[1])
            T.barrier_arrive(keys_free[3])
    finish(acc, denominator, sum_shared, row_max, lse, finished, own, scale, block_H, half)
    return acc, lse


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_seesaw_kernel(heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    # The query and key counts are read at each call: one kernel for every length.
    if not seesaw_fits(dim, tail_dim, topk, block_H, block_I):
        raise ValueError(f"the seesaw prefill takes block_H = block_I = tail_dim, dim a multiple of 128 and topk a "
                         f"multiple of 2 * block_I (pairs of steps), not dim {dim}, tail_dim {tail_dim}, topk {topk}, "
                         f"block_H {block_H}, block_I {block_I} (seesaw_fits)")
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")
    scale = sm_scale * LOG2E
    width, half = dim + tail_dim, dim // 2
    pairs = topk // (2 * block_I)

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
             Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq * T.ceildiv(heads, block_H), threads=3 * CONSUMER_THREADS) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            Q_shared = T.alloc_shared((block_H, width), "bfloat16")
            KV_shared = T.alloc_shared((2, block_I, width), "bfloat16")
            key_bias = T.alloc_shared((2, block_I), "float32")
            max_shared = T.alloc_shared((2, block_H), "float32")
            sum_shared = T.alloc_shared((2, block_H), "float32")
            # q_ready: Q landed; keys_ready / keys_free[2 * stage + part]: a part of a stage's
            # keys (and with part 0, its validity) landed / the consumers that read it are done
            # with it: stage 0's left half warpgroup 0 alone (its scores and its own product),
            # stage 1's warpgroup 0 (the other's), stage 0's right half and P warpgroup 1, stage
            # 1's both;
            # max_ready[w]: warpgroup w's max is in max_shared[w]; p_ready[w]: its P is over its
            # stage's RoPE columns; finished[w]: its denominator is in sum_shared[w]
            q_ready = T.alloc_barrier(CONSUMER_THREADS)
            keys_ready = T.alloc_barrier([2 * CONSUMER_THREADS] * 4)
            keys_free = T.alloc_barrier([CONSUMER_THREADS] * 3 + [2 * CONSUMER_THREADS])
            max_ready = T.alloc_barrier([CONSUMER_THREADS] * 2)
            p_ready = T.alloc_barrier([CONSUMER_THREADS] * 2)
            finished = T.alloc_barrier([CONSUMER_THREADS] * 2)
            h0 = hb * block_H

            with T.ws(0):
                T.set_max_nreg(200, 1)
                T.barrier_wait(q_ready, 0)
                acc_left, lse = seesaw_steps(0, Q_shared, KV_shared, key_bias, max_shared, sum_shared, keys_ready,
                                             keys_free, max_ready, p_ready, finished, pairs, scale, block_H, block_I,
                                             dim, half)
                T.copy(acc_left, Out[t, h0:h0 + block_H, 0:half])
                T.copy(lse, LSE[t, h0:h0 + block_H])
            with T.ws(1):
                T.set_max_nreg(200, 1)
                T.barrier_wait(q_ready, 0)
                acc_right, _ = seesaw_steps(1, Q_shared, KV_shared, key_bias, max_shared, sum_shared, keys_ready,
                                            keys_free, max_ready, p_ready, finished, pairs, scale, block_H, block_I,
                                            dim, half)
                T.copy(acc_right, Out[t, h0:h0 + block_H, half:dim])
            with T.ws(2):
                T.set_max_nreg(104, 0)  # (200 + 200 + 104) x 128 fit; at 72 or 88 it spilled
                T.tma_copy(Q[t, h0:h0 + block_H, :], Q_shared, barrier=q_ready)
                T.barrier_arrive(q_ready)
                gather_stages(Indices, KV, KV_shared, key_bias, keys_ready, keys_free, t, 2 * pairs, topk, seq_kv,
                              block_I, half)

    return main
