#!func main
#!config tilec.fast_math=true
#!bind CONSUMER_THREADS = 128
#!bind T = module(tilec.language)
#!bind block_H = 64
#!bind block_I = 64
#!bind dim = 512
#!bind gather_stages = func(gather_stages)
#!bind THREADS_A_ROW = 8
#!bind gather_rows = func(gather_rows)
#!bind CHUNK = 8
#!bind filled_row = func(filled_row)
#!bind mark_valid = func(mark_valid)
#!bind step_indices = func(step_indices)
#!bind index_at = func(index_at)
#!bind half = 256
#!bind heads = 64
#!bind pairs = 2
#!bind row_vectors = func(row_vectors)
#!bind scale = 0.06011229337037347
#!bind seesaw_steps = func(seesaw_steps)
#!bind LOG2E = 1.4426950408889634
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind seq = 4
#!bind seq_kv = 700
#!bind tail_dim = 64
#!bind topk = 256
#!bind width = 576
@T.prim_func
def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
         KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
         Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
    with T.Kernel(seq, T.ceildiv(heads, block_H), threads=3 * CONSUMER_THREADS) as (t, hb):
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
            T.set_max_nreg(224, 1)
            seesaw_steps(Q_shared, KV_shared, valid, max_shared, sum_shared, scores_0, acc_0, row_max_0,
                         row_max_prev_0, row_max_finite_0, rescale_0, row_sum_0, denominator_0, lse_0, q_ready,
                         keys_ready, keys_free, stats, p_ready, finished, 0, pairs, scale, block_H, block_I, dim,
                         half)
            T.copy(acc_0, Out[t, h0:h0 + block_H, 0:half])
            T.copy(lse_0, LSE[t, h0:h0 + block_H])
        with T.ws(1):
            T.set_max_nreg(224, 1)
            seesaw_steps(Q_shared, KV_shared, valid, max_shared, sum_shared, scores_1, acc_1, row_max_1,
                         row_max_prev_1, row_max_finite_1, rescale_1, row_sum_1, denominator_1, lse_1, q_ready,
                         keys_ready, keys_free, stats, p_ready, finished, 1, pairs, scale, block_H, block_I, dim,
                         half)
            T.copy(acc_1, Out[t, h0:h0 + block_H, half:dim])
        with T.ws(2):
            T.set_max_nreg(64, 0)
            T.tma_copy(Q[t, h0:h0 + block_H, :], Q_shared, barrier=q_ready)
            T.barrier_arrive(q_ready)
            gather_stages(Indices, KV, KV_shared, valid, keys_ready, keys_free, t, 2 * pairs, topk, seq_kv,
                          block_I)


@T.macro
def gather_stages(Indices, KV, KV_shared, valid, keys_ready, keys_free, t, steps, topk, seq_kv, block_I):
    # Warpgroup 2 of a prefill: each step's indexed key rows into its stage (two, in turn), once
    # both consumers are done with the stage's last rows.
    lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
    rows_index = T.alloc_local((block_I * THREADS_A_ROW // CONSUMER_THREADS,), "int32")
    for r in T.serial(T.ceildiv(steps, 2)):
        for stage in T.unroll(2):
            if r * 2 + stage < steps:
                # the step's indices, read before its stage is free: their loads overlap the
                # wait (read one by one between cp.asyncs, the gathers ran 22% slower)
                step_indices(Indices, t, r * 2 + stage, rows_index, lane, topk, seq_kv, block_I)
                T.barrier_wait(keys_free[stage], (r & 1) ^ 1)
                mark_valid(rows_index, valid, stage, lane)
                gather_rows(KV, 0, rows_index, KV_shared, stage, lane, 0, KV_shared.shape[2])
                T.cp_async_barrier_noinc(keys_ready[stage])
                T.barrier_arrive(keys_ready[stage])  # releases the validity flags


@T.macro
def gather_rows(KV, src_first, rows_index, KV_shared, stage, lane, first, count):
    # This thread's part of columns [first, first + count) of a step's rows, from columns
    # src_first.. of the keys rows_index names: CHUNK elements a cp.async, zeros for an invalid key.
    for j in T.unroll(rows_index.shape[0]):
        for c in T.serial(T.ceildiv(count // CHUNK, THREADS_A_ROW)):
            column = (c * THREADS_A_ROW + lane % THREADS_A_ROW) * CHUNK
            if column < count:
                T.ptx_cp_async(T.access_ptr(KV_shared[stage, filled_row(j, lane), first + column], "w", CHUNK),
                               T.access_ptr(KV[T.max(rows_index[j], 0), 0, src_first + column], "r", CHUNK), CHUNK,
                               predicate=rows_index[j] >= 0)


@T.macro
def filled_row(j, lane):
    # The key row of a step that this producer thread fills in its j-th round: THREADS_A_ROW
    # threads a row, CONSUMER_THREADS // THREADS_A_ROW rows a round.
    return j * (CONSUMER_THREADS // THREADS_A_ROW) + lane // THREADS_A_ROW


@T.macro
def mark_valid(rows_index, valid, stage, lane):
    for j in T.unroll(rows_index.shape[0]):
        valid[stage, filled_row(j, lane)] = rows_index[j] >= 0


@T.macro
def step_indices(Indices, t, step, rows_index, lane, topk, keys, block_I):
    # The indices of the rows this producer thread fills in step `step`, -1 where invalid.
    for j in T.unroll(rows_index.shape[0]):
        rows_index[j] = index_at(Indices, t, step * block_I + filled_row(j, lane), topk, keys)


@T.macro
def index_at(Indices, row, slot, topk, keys):
    # Indices[row, slot]; -1 past topk and for an invalid one.
    index = T.if_then_else(slot < topk, Indices[row, T.min(slot, topk - 1)], -1)
    return T.if_then_else((index >= 0) & (index < keys), index, -1)


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
        T.gemm(KV_shared[own, :, dim:dim + block_I], KV_shared[own, :, columns:columns + half], acc)
        T.barrier_wait(keys_ready[peer], r & 1)
        T.barrier_wait(p_ready[peer], r & 1)
        T.gemm(KV_shared[peer, :, dim:dim + block_I], KV_shared[peer, :, columns:columns + half], acc)
        T.barrier_arrive(keys_free[0])
        T.barrier_arrive(keys_free[1])
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


@T.macro
def rescale_output(acc_o, rescale, block_M, dim):
    for i, j in T.Parallel(block_M, dim):
        acc_o[i, j] *= rescale[i]


@T.macro
def row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N):
    # scores = exp2((scores - max) * scale), and the rows' running sum rescaled and added to.
    for i, j in T.Parallel(block_M, block_N):
        scores[i, j] = T.exp2(scores[i, j] * scale - row_max_finite[i] * scale)
    T.reduce_sum(scores, row_sum, dim=1)
    for i in T.Parallel(block_M):
        denominator[i] = denominator[i] * rescale[i] + row_sum[i]
