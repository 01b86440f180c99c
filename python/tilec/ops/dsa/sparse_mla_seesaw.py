"""Sparse MLA prefill on Hopper with the steps split between two warpgroups (a "seesaw", as
TileLang's sparse_mla_fwd_seesaw example calls it): sparse_mla.py's computation, 384 threads.

sparse_mla_hopper.py's kernel leaves every score gemm and every softmax to warpgroup 0, and only
the right half of P V to warpgroup 1: warpgroup 0 carries 6.8 of each step's 8.9 MFLOP and the
softmax. Here each consumer warpgroup takes every other step (warpgroup 0 the even steps, in
stage 0; warpgroup 1 the odd, in stage 1) and one half of O's columns:

- each scores its own step's keys (one wgmma chain over 576 dims), takes its rows' running max
  over them and hands it to the other through shared memory; both then have the pair's max,
  and so the same rescale factors;
- each writes its P over its stage's RoPE columns (whose scores are done: block_I, tail_dim
  and block_H are all 64, and a third stage would not fit) and multiplies both P's into its
  half of O, stage 0's first: stage 0 is free for the next pair's keys once both have, while
  they multiply stage 1's;
- each keeps the denominator of its own steps; the two are added at the end.

Warpgroup 2 gathers the keys, as in sparse_mla_hopper.py. A pair of steps needs both: the
kernel takes an even number of steps (topk a multiple of 2 * block_I).
"""

import tilec
import tilec.language as T

from ..attention import FAST_MATH, LOG2E, rescale_output, row_exp_step
from .sparse_indices import token_and_head_block
from .sparse_mla_hopper import CONSUMER_THREADS, gather_stages

SEESAW_CONFIG = dict(block_H=64, block_I=64)


def seesaw_fits(dim, tail_dim, topk, block_H=64, block_I=64):
    """Whether sparse_mla_prefill_seesaw_kernel takes this shape: P over the RoPE columns (64
    heads, 64 keys a step, 64 RoPE dims), each half of the value whole 64-wide panels, and
    pairs of steps."""
    return (block_H == block_I == tail_dim and dim % 128 == 0 and topk % (2 * block_I) == 0
            and 2 * (block_H + 2 * block_I) * (dim + tail_dim) + 4096 <= 227 * 1024)


def row_vectors(block_H):
    # A consumer warpgroup's row statistics: running max, the last one, the max used in the
    # exponents (0 for -inf), the rescale factor, a step's row sums, the denominator, lse.
    return tuple(T.alloc_fragment((block_H,), "float32") for _ in range(7))


@T.macro
def seesaw_steps(Q_shared, KV_shared, valid, max_shared, sum_shared, scores, acc, row_max, row_max_prev,
                 row_max_finite, rescale, row_sum, denominator, lse, q_ready, keys_ready, keys_free, stats, p_ready,
                 finished, own, pairs, scale, block_H, block_I, dim, half):
    # Consumer warpgroup `own` (0 or 1): its step of each pair in stage `own`, its half of O
    # (columns own * half ..), over the denominators when it returns; lse (the same on both).
    peer = 1 - own
    columns = own * half
    T.fill(acc, 0)
    T.fill(denominator, 0)
    T.fill(row_max, -T.infinity("float32"))
    T.barrier_wait(q_ready, 0)
    for r in T.serial(pairs):
        T.barrier_wait(keys_ready[own], r & 1)
        T.gemm(Q_shared, KV_shared[own, :, :], scores, transpose_B=True, clear_accum=True)
        for h, i in T.Parallel(block_H, block_I):
            scores[h, i] = T.if_then_else(valid[own, i], scores[h, i], -T.infinity("float32"))
        # the pair's running max: this step's, then the other's
        T.copy(row_max, row_max_prev)
        T.reduce_max(scores, row_max, dim=1, clear=False)
        T.copy(row_max, max_shared[own, :])
        T.barrier_arrive(stats[own])
        T.barrier_wait(stats[peer], r & 1)
        # a row that has seen no key yet keeps a max of -inf: its terms use 0 instead
        for h in T.Parallel(block_H):
            row_max[h] = T.max(row_max[h], max_shared[peer, h])
            row_max_finite[h] = T.if_then_else(row_max[h] == -T.infinity("float32"), 0, row_max[h])
            rescale[h] = T.exp2((row_max_prev[h] - row_max_finite[h]) * scale)
        rescale_output(acc, rescale, block_H, half)
        row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I)
        # P over this stage's RoPE columns, which this warpgroup's scores were the last to read
        T.copy(scores, KV_shared[own, :, dim:dim + block_I])
        T.fence_proxy_async()
        T.barrier_arrive(p_ready[own])
        # both warpgroups multiply stage 0's P first and free the stage, so that the producer
        # gathers the next pair's first step while they multiply stage 1's
        for stage in (0, 1):
            if stage != own:
                T.barrier_wait(keys_ready[stage], r & 1)
                T.barrier_wait(p_ready[stage], r & 1)
            T.gemm(KV_shared[stage, :, dim:dim + block_I], KV_shared[stage, :, columns:columns + half], acc)
            T.barrier_arrive(keys_free[stage])
    # the denominator of both warpgroups' steps; O over it, and the natural log-sum-exp: +inf
    # (and O 0) for a row that had no valid key, as FlashMLA gives
    T.copy(denominator, sum_shared[own, :])
    T.barrier_arrive(finished[own])
    T.barrier_wait(finished[peer], 0)
    for h in T.Parallel(block_H):
        row_sum[h] = denominator[h] + sum_shared[peer, h]
        lse[h] = T.if_then_else(row_sum[h] > 0, (row_max[h] * scale + T.log2(row_sum[h])) / LOG2E,
                                T.infinity("float32"))
    for h, d in T.Parallel(block_H, half):
        acc[h, d] = T.if_then_else(row_sum[h] > 0, acc[h, d] / row_sum[h], 0)


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_seesaw_kernel(heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    # The query and key counts are read at each call: one kernel for every length.
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
            valid = T.alloc_shared((2, block_I), "bool")
            max_shared = T.alloc_shared((2, block_H), "float32")
            sum_shared = T.alloc_shared((2, block_H), "float32")
            # each consumer warpgroup's own registers
            scores_0 = T.alloc_fragment((block_H, block_I), "float32")
            scores_1 = T.alloc_fragment((block_H, block_I), "float32")
            acc_0 = T.alloc_fragment((block_H, half), "float32")
            acc_1 = T.alloc_fragment((block_H, half), "float32")
            row_max_0, row_max_prev_0, row_max_finite_0, rescale_0, row_sum_0, denominator_0, lse_0 = row_vectors(block_H)
            row_max_1, row_max_prev_1, row_max_finite_1, rescale_1, row_sum_1, denominator_1, lse_1 = row_vectors(block_H)
            # q_ready: Q landed; keys_ready / keys_free: a stage's keys and validity landed /
            # both consumers are done with them; stats: a warpgroup's running max is in
            # max_shared; p_ready: its P is over its stage's RoPE columns; finished: its
            # denominator is in sum_shared
            q_ready = T.alloc_barrier(CONSUMER_THREADS)
            keys_ready = T.alloc_barrier([2 * CONSUMER_THREADS] * 2)
            keys_free = T.alloc_barrier([2 * CONSUMER_THREADS] * 2)
            stats = T.alloc_barrier([CONSUMER_THREADS] * 2)
            p_ready = T.alloc_barrier([CONSUMER_THREADS] * 2)
            finished = T.alloc_barrier([CONSUMER_THREADS] * 2)
            h0 = hb * block_H

            with T.ws(0):
                T.set_max_nreg(216, 1)
                seesaw_steps(Q_shared, KV_shared, valid, max_shared, sum_shared, scores_0, acc_0, row_max_0,
                             row_max_prev_0, row_max_finite_0, rescale_0, row_sum_0, denominator_0, lse_0, q_ready,
                             keys_ready, keys_free, stats, p_ready, finished, 0, pairs, scale, block_H, block_I, dim,
                             half)
                T.copy(acc_0, Out[t, h0:h0 + block_H, 0:half])
                T.copy(lse_0, LSE[t, h0:h0 + block_H])
            with T.ws(1):
                T.set_max_nreg(216, 1)
                seesaw_steps(Q_shared, KV_shared, valid, max_shared, sum_shared, scores_1, acc_1, row_max_1,
                             row_max_prev_1, row_max_finite_1, rescale_1, row_sum_1, denominator_1, lse_1, q_ready,
                             keys_ready, keys_free, stats, p_ready, finished, 1, pairs, scale, block_H, block_I, dim,
                             half)
                T.copy(acc_1, Out[t, h0:h0 + block_H, half:dim])
            with T.ws(2):
                T.set_max_nreg(72, 0)
                T.tma_copy(Q[t, h0:h0 + block_H, :], Q_shared, barrier=q_ready)
                T.barrier_arrive(q_ready)
                gather_stages(Indices, KV, KV_shared, valid, keys_ready, keys_free, t, 2 * pairs, topk, seq_kv,
                              block_I)

    return main
