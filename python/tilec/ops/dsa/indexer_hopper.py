"""The lightning indexer on Hopper, warp-specialized: indexer.py's logits (its docstring says what
they are), with a program's 384 threads in three warpgroups so that one warpgroup's gemm runs on
the tensor cores while the other's ReLU and head sum run on the CUDA cores:

- warpgroups 0 and 1 take the program's key blocks in turn (even steps, odd steps): a block's
  scores against every query's heads in one fp8 wgmma, read as [keys, queries, heads] through a
  view of the accumulator (T.reshape), ReLU times the head weights, the head sum in one
  reduction, and the logits stored;
- warpgroup 2 loads the queries' heads once and each key block into a ring of stages by TMA.

The head sum costs about as much as the gemm (a few CUDA-core operations a score against 2 x 128
on the tensor cores, which run some 20 times faster): one warpgroup alone leaves the tensor cores
idle while it sums. DeepGEMM's fp8 MQA logits kernel splits its work the same way.
"""

import tilec
import tilec.language as T

from .indexer import FP8, fill_unscored, heaviest_first, key_range, union_range

HOPPER_CONFIG = dict(block_N=64, stages=4, queries=2)
GROUP = 128  # threads of a warpgroup


@T.macro
def score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores, weights, logits,
                ranges, key_scales, group, t0, seq, start, steps, seq_kv, max_len, block_N, stages, queries, heads):
    # Warpgroup `group`'s key blocks (steps group, group + 2, ...): each block's scores against
    # every query's heads in one gemm, read as [keys, queries, heads] (a view of the
    # accumulator), ReLU times the head weights, summed over the heads, and stored: -inf
    # outside a query's range, columns past the logits' width left alone. The queries' ranges
    # are read once (`ranges`, each thread's own), a block's key scales before its gemm, so
    # their loads wait under it.
    width = Logits.shape[1]
    by_head = T.reshape(scores, (block_N, queries, heads))
    T.copy(W[t0:t0 + queries, :], weights)
    for q in T.unroll(queries):
        ranges[q, 0], ranges[q, 1] = key_range(KS, KE, T.min(t0 + q, seq - 1), seq_kv, max_len)
    T.barrier_wait(q_ready, 0)
    for m in T.serial(T.ceildiv(T.max(steps - group, 0), 2)):
        n = 2 * m + group
        for i in T.Parallel(block_N):
            key_scales[i] = K_scale[T.min(start + n * block_N + i, seq_kv - 1)]
        T.barrier_wait(k_ready[n % stages], (n // stages) & 1)
        T.gemm(K_shared[n % stages, :, :], Q_shared, scores, transpose_B=True, clear_accum=True)
        T.barrier_arrive(k_free[n % stages])
        for i, q, h in T.Parallel(block_N, queries, heads):
            by_head[i, q, h] = T.max(by_head[i, q, h], 0) * weights[q, h]
        T.reduce_sum(by_head, logits, dim=2, clear=True)
        for i, q in T.Parallel(block_N, queries):
            key = start + n * block_N + i
            column = key - (ranges[q, 0] if max_len else 0)
            if (t0 + q < seq) & (column >= 0) & (column < width):
                Logits[t0 + q, column] = T.if_then_else((key >= ranges[q, 0]) & (key < ranges[q, 1]),
                                                        logits[i, q] * key_scales[i], -T.infinity("float32"))


@tilec.jit(out_idx=[-1])
def indexer_logits_hopper_kernel(heads, dim, max_len=0, block_N=64, stages=4, queries=2):
    # max_len 0: logits [seq, seq_kv], key s in column s. max_len > 0 (the compressed form):
    # logits [seq, max_len], key ks[t] + c in column c. Q is [seq * heads, dim]: a program's
    # queries' heads are one TMA box. seq and seq_kv are read at each call.
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")
    width = max_len if max_len else seq_kv
    rows = queries * heads

    @T.prim_func
    def main(Q: T.Tensor((seq * heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
             K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
             KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"), Logits: T.Tensor((seq, width), "float32")):
        with T.Kernel(T.ceildiv(seq, queries), threads=3 * GROUP) as program:
            Q_shared = T.alloc_shared((rows, dim), FP8)
            K_shared = T.alloc_shared((stages, block_N, dim), FP8)
            # each consumer warpgroup's own registers
            scores_0 = T.alloc_fragment((block_N, rows), "float32")
            scores_1 = T.alloc_fragment((block_N, rows), "float32")
            weights_0 = T.alloc_fragment((queries, heads), "float32")
            weights_1 = T.alloc_fragment((queries, heads), "float32")
            logits_0 = T.alloc_fragment((block_N, queries), "float32")
            logits_1 = T.alloc_fragment((block_N, queries), "float32")
            key_scales_0 = T.alloc_fragment((block_N,), "float32")
            key_scales_1 = T.alloc_fragment((block_N,), "float32")
            ranges_0 = T.alloc_local((queries, 2), "int32")
            ranges_1 = T.alloc_local((queries, 2), "int32")
            # q_ready: the heads landed; k_ready: a stage's keys landed; k_free: the warpgroup
            # whose step it was is done with a stage
            q_ready = T.alloc_barrier(GROUP)
            k_ready = T.alloc_barrier([GROUP] * stages)
            k_free = T.alloc_barrier([GROUP] * stages)
            t0 = heaviest_first(program, seq, queries)
            start, end = union_range(KS, KE, t0, seq, queries, seq_kv, max_len)
            steps = T.ceildiv(end - start, block_N)

            with T.ws(0):
                score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores_0,
                            weights_0, logits_0, ranges_0, key_scales_0, 0, t0, seq, start, steps, seq_kv, max_len,
                            block_N, stages, queries, heads)
            with T.ws(1):
                score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores_1,
                            weights_1, logits_1, ranges_1, key_scales_1, 1, t0, seq, start, steps, seq_kv, max_len,
                            block_N, stages, queries, heads)
            with T.ws(2):
                T.tma_copy(Q[t0 * heads:t0 * heads + rows, :], Q_shared, barrier=q_ready)
                T.barrier_arrive(q_ready)
                for n in T.serial(steps):
                    T.barrier_wait(k_free[n % stages], ((n // stages) & 1) ^ 1)
                    T.tma_copy(K[start + n * block_N:start + (n + 1) * block_N, :], K_shared[n % stages, :, :],
                               barrier=k_ready[n % stages])
                    T.barrier_arrive(k_ready[n % stages])
                fill_unscored(Logits, KS, KE, t0, seq, start, steps, queries, seq_kv, max_len, block_N)

    return main
