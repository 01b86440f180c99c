#!func main
#!bind FP8 = "float8_e4m3"
#!bind GROUP = 128
#!bind T = module(tilec.language)
#!bind block_N = 64
#!bind dim = 128
#!bind fill_unscored = func(fill_unscored)
#!bind fill_minus_infinity = func(fill_minus_infinity)
#!bind key_range = func(key_range)
#!bind heads = 64
#!bind max_len = 0
#!bind queries = 2
#!bind rows = 128
#!bind score_steps = func(score_steps)
#!bind seq = 62
#!bind seq_kv = 213
#!bind stages = 4
#!bind union_range = func(union_range)
#!bind width = 213
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
        # q_ready: the heads landed; k_ready: a stage's keys landed; k_free: the warpgroup
        # whose step it was is done with a stage
        q_ready = T.alloc_barrier(GROUP)
        k_ready = T.alloc_barrier([GROUP] * stages)
        k_free = T.alloc_barrier([GROUP] * stages)
        t0 = program * queries
        last = T.min(t0 + queries, seq) - 1
        start, end = union_range(KS, KE, t0, last, queries, seq_kv, max_len)
        steps = T.ceildiv(end - start, block_N)

        with T.ws(0):
            score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores_0,
                        weights_0, logits_0, 0, t0, last, start, steps, seq_kv, max_len, block_N, stages, queries,
                        heads)
        with T.ws(1):
            score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores_1,
                        weights_1, logits_1, 1, t0, last, start, steps, seq_kv, max_len, block_N, stages, queries,
                        heads)
        with T.ws(2):
            T.tma_copy(Q[t0 * heads:t0 * heads + rows, :], Q_shared, barrier=q_ready)
            T.barrier_arrive(q_ready)
            for n in T.serial(steps):
                T.barrier_wait(k_free[n % stages], ((n // stages) & 1) ^ 1)
                T.tma_copy(K[start + n * block_N:start + (n + 1) * block_N, :], K_shared[n % stages, :, :],
                           barrier=k_ready[n % stages])
                T.barrier_arrive(k_ready[n % stages])
            fill_unscored(Logits, KS, KE, t0, last, start, steps, queries, seq_kv, max_len, block_N)


@T.macro
def fill_unscored(Logits, KS, KE, t0, last, start, steps, queries, seq_kv, max_len, block_N):
    # -inf in every column of queries t0.. that no step of block_N keys from `start` writes:
    # before the union's first key and past its last step
    width = Logits.shape[1]
    for q in T.unroll(queries):
        if t0 + q <= last:
            q_start, q_end = key_range(KS, KE, t0 + q, seq_kv, max_len)
            base = q_start if max_len else 0
            fill_minus_infinity(Logits, t0 + q, 0, T.min(start - base, width), block_N)
            fill_minus_infinity(Logits, t0 + q, T.max(start - base + steps * block_N, 0), width, block_N)


@T.macro
def fill_minus_infinity(Logits, row, begin, end, block_N):
    # Logits[row, begin:end] = -inf
    for n in T.serial(T.ceildiv(T.max(end - begin, 0), block_N)):
        for i in T.Parallel(block_N):
            if begin + n * block_N + i < end:
                Logits[row, begin + n * block_N + i] = -T.infinity("float32")


@T.macro
def key_range(KS, KE, t, seq_kv, max_len):
    # Query t's keys [start, end): its range cut to [0, seq_kv) (and to max_len keys)
    start = T.min(T.max(KS[t], 0), seq_kv)
    end = T.max(T.min(KE[t], seq_kv, start + max_len) if max_len else T.min(KE[t], seq_kv), start)
    return start, end


@T.macro
def score_steps(Q_shared, K_shared, W, K_scale, KS, KE, Logits, q_ready, k_ready, k_free, scores, weights, logits,
                group, t0, last, start, steps, seq_kv, max_len, block_N, stages, queries, heads):
    # Warpgroup `group`'s key blocks (steps group, group + 2, ...): each block's scores against
    # every query's heads in one gemm, read as [keys, queries, heads] (a view of the
    # accumulator), ReLU times the head weights, summed over the heads, and stored: -inf
    # outside a query's range, columns past the logits' width left alone.
    width = Logits.shape[1]
    by_head = T.reshape(scores, (block_N, queries, heads))
    T.copy(W[t0:t0 + queries, :], weights)
    T.barrier_wait(q_ready, 0)
    for m in T.serial(T.ceildiv(T.max(steps - group, 0), 2)):
        n = 2 * m + group
        T.barrier_wait(k_ready[n % stages], (n // stages) & 1)
        T.gemm(K_shared[n % stages, :, :], Q_shared, scores, transpose_B=True, clear_accum=True)
        T.barrier_arrive(k_free[n % stages])
        for i, q, h in T.Parallel(block_N, queries, heads):
            by_head[i, q, h] = T.max(by_head[i, q, h], 0) * weights[q, h]
        T.reduce_sum(by_head, logits, dim=2, clear=True)
        for i, q in T.Parallel(block_N, queries):
            key = start + n * block_N + i
            q_start, q_end = key_range(KS, KE, T.min(t0 + q, last), seq_kv, max_len)
            column = key - (q_start if max_len else 0)
            if (t0 + q <= last) & (column >= 0) & (column < width):
                Logits[t0 + q, column] = T.if_then_else((key >= q_start) & (key < q_end),
                                                        logits[i, q] * K_scale[T.min(key, seq_kv - 1)],
                                                        -T.infinity("float32"))


@T.macro
def union_range(KS, KE, t0, last, queries, seq_kv, max_len):
    # The union [start, end) of queries t0..'s key ranges (a query past `last` is the last
    # again), bound once: what reads it (the pipelined copies) takes its values.
    lo = T.alloc_var("int32", seq_kv)
    hi = T.alloc_var("int32", 0)
    for q in T.unroll(queries):
        q_start, q_end = key_range(KS, KE, T.min(t0 + q, last), seq_kv, max_len)
        lo = T.min(lo, q_start)
        hi = T.max(hi, q_end)
    start = lo + 0
    return start, T.max(hi, start)
