"""Sparse MLA prefill on Hopper, warp-specialized: sparse_mla.py's computation (its docstring says
what), with a program's 384 threads split in three warpgroups that hand work to each other
through mbarriers, so the tensor cores, the softmax and the gathers overlap:

- warpgroup 0 computes a step's scores (all block_I keys of the block_H heads, one wgmma chain),
  their online softmax, and the left half of O += P V;
- warpgroup 1 computes the right half of O += P V from the P and the rescale factors warpgroup 0
  leaves in shared memory, while warpgroup 0 goes on to the next step's scores;
- warpgroup 2 gathers the indexed key rows into two stages by cp.async.

No row reduction crosses warpgroups: a row's softmax lives in warpgroup 0 alone. TileLang's
sparse_mla_fwd_pipelined example splits its work the same way.
"""

import tilec
import tilec.language as T

from ..attention import FAST_MATH, LOG2E, rescale_output, row_exp_step, row_max_step
from .sparse_indices import index_at

HOPPER_CONFIG = dict(block_H=64, block_I=64)
CONSUMER_THREADS = 128  # a warpgroup
CHUNK = 8  # bfloat16 elements a cp.async moves (16 bytes)
THREADS_A_ROW = 8  # producer threads that gather one key row together


SHARED_BYTES = 227 * 1024  # a Hopper block's shared memory


def hopper_prefill_fits(dim, tail_dim, block_H=64, block_I=64):
    """Whether sparse_mla_prefill_hopper_kernel takes this shape: each half of the value a
    whole number of 64-wide swizzle panels (so each of the two value gemms reads whole panels),
    and Q, two stages of keys and P in shared memory (DeepSeek's 512 + 64 dims take 225 KiB)."""
    width = dim + tail_dim
    shared = 2 * (block_H * width + 2 * block_I * width + block_H * block_I) + 2048  # and flags, factors, barriers
    return dim % 128 == 0 and tail_dim % 64 == 0 and shared <= SHARED_BYTES


@T.macro
def gathered_row(j, lane):
    # The key row of a step that this producer thread gathers in its j-th round: THREADS_A_ROW
    # threads a row, CONSUMER_THREADS // THREADS_A_ROW rows a round.
    return j * (CONSUMER_THREADS // THREADS_A_ROW) + lane // THREADS_A_ROW


@T.macro
def gather_step(KV, rows_index, KV_shared, valid, stage, lane, width):
    # This thread's part of a step's gather into stage `stage`, from the step's indices in
    # rows_index: CHUNK elements a cp.async (zeros for an invalid key), and each row's validity.
    for j in T.unroll(rows_index.shape[0]):
        valid[stage, gathered_row(j, lane)] = rows_index[j] >= 0
    for j in T.unroll(rows_index.shape[0]):
        for c in T.serial(T.ceildiv(width // CHUNK, THREADS_A_ROW)):
            column = (c * THREADS_A_ROW + lane % THREADS_A_ROW) * CHUNK
            if column < width:
                T.ptx_cp_async(T.access_ptr(KV_shared[stage, gathered_row(j, lane), column], "w", CHUNK),
                               T.access_ptr(KV[T.max(rows_index[j], 0), 0, column], "r", CHUNK), CHUNK,
                               predicate=rows_index[j] >= 0)


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_hopper_kernel(seq, seq_kv, heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    scale = sm_scale * LOG2E
    width, half = dim + tail_dim, dim // 2
    steps = T.ceildiv(topk, block_I)
    rounds = block_I * THREADS_A_ROW // CONSUMER_THREADS  # of a producer thread's gathers a step

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
             Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq, T.ceildiv(heads, block_H), threads=3 * CONSUMER_THREADS) as (t, hb):
            Q_shared = T.alloc_shared((block_H, width), "bfloat16")
            KV_shared = T.alloc_shared((2, block_I, width), "bfloat16")
            valid = T.alloc_shared((2, block_I), "bool")
            P_shared = T.alloc_shared((block_H, block_I), "bfloat16")
            rescale_shared = T.alloc_shared((block_H,), "float32")
            inverse_shared = T.alloc_shared((block_H,), "float32")
            scores = T.alloc_fragment((block_H, block_I), "float32")
            acc_left = T.alloc_fragment((block_H, half), "float32")
            acc_right = T.alloc_fragment((block_H, half), "float32")
            row_max = T.alloc_fragment((block_H,), "float32")
            row_max_prev = T.alloc_fragment((block_H,), "float32")
            row_max_finite = T.alloc_fragment((block_H,), "float32")
            rescale = T.alloc_fragment((block_H,), "float32")
            row_sum = T.alloc_fragment((block_H,), "float32")
            denominator = T.alloc_fragment((block_H,), "float32")
            lse = T.alloc_fragment((block_H,), "float32")
            # keys_ready: a stage's rows landed (the producer's cp.asyncs) and its validity is
            # written (the producer's arrivals); keys_free: both consumers are done with a stage;
            # p_ready / p_free: P and the rescale factors in shared memory, handed to warpgroup 1
            # and back; finished: warpgroup 0's reciprocal denominators are in shared memory.
            keys_ready = T.alloc_barrier([2 * CONSUMER_THREADS] * 2)
            keys_free = T.alloc_barrier([2 * CONSUMER_THREADS] * 2)
            p_ready = T.alloc_barrier(2 * CONSUMER_THREADS)
            p_free = T.alloc_barrier(2 * CONSUMER_THREADS)
            finished = T.alloc_barrier(CONSUMER_THREADS)
            h0 = hb * block_H

            with T.ws(0):
                T.set_max_nreg(240, 1)
                T.copy(Q[t, h0:h0 + block_H, :], Q_shared)
                T.fill(acc_left, 0)
                T.fill(denominator, 0)
                T.fill(row_max, -T.infinity("float32"))
                for r in T.serial(T.ceildiv(steps, 2)):
                    for stage in T.unroll(2):
                        if r * 2 + stage < steps:
                            T.barrier_wait(keys_ready[stage], r & 1)
                            T.gemm(Q_shared, KV_shared[stage, :, :], scores, transpose_B=True, clear_accum=True)
                            for h, i in T.Parallel(block_H, block_I):
                                scores[h, i] = T.if_then_else(valid[stage, i], scores[h, i], -T.infinity("float32"))
                            if r * 2 + stage > 0:  # warpgroup 1 has read the last step's P
                                T.barrier_arrive(p_free)
                                T.barrier_wait(p_free, (r * 2 + stage - 1) & 1)
                            row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_H)
                            rescale_output(acc_left, rescale, block_H, half)
                            row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_H,
                                         block_I)
                            T.copy(rescale, rescale_shared)
                            T.copy(scores, P_shared)
                            T.fence_proxy_async()
                            T.barrier_arrive(p_ready)
                            T.gemm(P_shared, KV_shared[stage, :, 0:half], acc_left)
                            T.barrier_arrive(keys_free[stage])
                # O over each row's denominator, and its natural log-sum-exp: +inf (and O 0) for
                # a row that had no valid key, as FlashMLA gives
                for h in T.Parallel(block_H):
                    inverse_shared[h] = T.if_then_else(denominator[h] > 0, 1 / denominator[h], 0)
                    lse[h] = T.if_then_else(denominator[h] > 0,
                                            (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                            T.infinity("float32"))
                T.barrier_arrive(finished)
                for h, d in T.Parallel(block_H, half):
                    acc_left[h, d] *= inverse_shared[h]
                T.copy(acc_left, Out[t, h0:h0 + block_H, 0:half])
                T.copy(lse, LSE[t, h0:h0 + block_H])

            with T.ws(1):
                T.set_max_nreg(168, 1)
                T.fill(acc_right, 0)
                for r in T.serial(T.ceildiv(steps, 2)):
                    for stage in T.unroll(2):
                        if r * 2 + stage < steps:
                            T.barrier_arrive(p_ready)
                            T.barrier_wait(p_ready, (r * 2 + stage) & 1)
                            for h, d in T.Parallel(block_H, half):
                                acc_right[h, d] *= rescale_shared[h]
                            T.gemm(P_shared, KV_shared[stage, :, half:dim], acc_right)
                            T.barrier_arrive(keys_free[stage])
                            if r * 2 + stage < steps - 1:
                                T.barrier_arrive(p_free)
                T.barrier_wait(finished, 0)
                for h, d in T.Parallel(block_H, half):
                    acc_right[h, d] *= inverse_shared[h]
                T.copy(acc_right, Out[t, h0:h0 + block_H, half:dim])

            with T.ws(2):
                T.set_max_nreg(80, 0)
                lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
                rows_index = T.alloc_local((rounds,), "int32")
                for r in T.serial(T.ceildiv(steps, 2)):
                    for stage in T.unroll(2):
                        if r * 2 + stage < steps:
                            # the step's indices, read before its stage is free: their loads
                            # overlap the wait (read one by one between cp.asyncs, the gathers
                            # ran 22% slower)
                            for j in T.unroll(rounds):
                                rows_index[j] = index_at(Indices, t, (r * 2 + stage) * block_I + gathered_row(j, lane),
                                                         topk, seq_kv)
                            T.barrier_wait(keys_free[stage], (r & 1) ^ 1)
                            gather_step(KV, rows_index, KV_shared, valid, stage, lane, width)
                            T.cp_async_barrier_noinc(keys_ready[stage])
                            T.barrier_arrive(keys_ready[stage])  # releases the validity flags

    return main
