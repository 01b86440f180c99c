#!func main
#!config tilec.fast_math=true
#!bind CONSUMER_THREADS = 128
#!bind FP8_TOKEN_BYTES = 656
#!bind T = module(tilec.language)
#!bind attend_stages = func(attend_stages)
#!bind hopper_buffers = func(hopper_buffers)
#!bind right_half = func(right_half)
#!bind scores_and_left_half = func(scores_and_left_half)
#!bind LOG2E = 1.4426950408889634
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind row_max_step = func(row_max_step)
#!bind block_H = 64
#!bind block_I = 64
#!bind dequantize_step = func(dequantize_step)
#!bind FP8_DIM = 512
#!bind FP8_GROUP = 128
#!bind dim = 512
#!bind filled_row = func(filled_row)
#!bind THREADS_A_ROW = 8
#!bind gather_rows = func(gather_rows)
#!bind CHUNK = 8
#!bind heads = 32
#!bind index_at = func(index_at)
#!bind rope_at = 264
#!bind rounds = 4
#!bind s_q = 2
#!bind scale = 0.06011229337037347
#!bind slots = 448
#!bind steps = 1
#!bind tail_dim = 64
#!bind tokens = 6
#!bind topk = 64
@T.prim_func
def main(Q: T.Tensor((tokens, heads, dim + tail_dim), "bfloat16"),
         Cache: T.Tensor((slots, FP8_TOKEN_BYTES), "uint8"),
         Scales: T.Tensor((slots, FP8_TOKEN_BYTES // 4), "float32"),
         Rope: T.Tensor((slots, 1, FP8_TOKEN_BYTES // 2), "bfloat16"), Indices: T.Tensor((tokens, topk), "int32"),
         Out: T.Tensor((tokens, heads, dim), "bfloat16"), LSE: T.Tensor((tokens // s_q, heads, s_q), "float32")):
    with T.Kernel(tokens, T.ceildiv(heads, block_H), threads=3 * CONSUMER_THREADS) as (t, hb):
        h0 = hb * block_H
        KV_shared, valid, keys_ready, keys_free, lse = attend_stages(Q, Out, t, h0, steps, scale, block_H, block_I,
                                                                     dim, tail_dim)
        with T.ws(0):
            for h in T.Parallel(block_H):
                if h0 + h < heads:
                    LSE[t // s_q, h0 + h, t % s_q] = lse[h]
        with T.ws(2):
            T.set_max_nreg(96, 0)  # (240 + 168 + 96) x 128 fit; with 80 the dequantizing spilled
            lane = T.get_thread_binding() - 2 * CONSUMER_THREADS
            rows_index = T.alloc_local((rounds,), "int32")
            slot_shared = T.alloc_shared((block_I,), "int32")
            for r in T.serial(T.ceildiv(steps, 2)):
                for stage in T.unroll(2):
                    if r * 2 + stage < steps:
                        # the step's slots, read before its stage is free: their loads
                        # overlap the wait
                        for i in T.Parallel(block_I):
                            slot_shared[i] = index_at(Indices, t, (r * 2 + stage) * block_I + i, topk, slots)
                        T.barrier_wait(keys_free[stage], (r & 1) ^ 1)
                        for i in T.Parallel(block_I):
                            valid[stage, i] = slot_shared[i] >= 0
                        for j in T.unroll(rounds):
                            rows_index[j] = slot_shared[filled_row(j, lane)]
                        gather_rows(Rope, rope_at, rows_index, KV_shared, stage, lane, dim, tail_dim)
                        dequantize_step(Cache, Scales, slot_shared, KV_shared, stage, block_I)
                        # the dequantized values are the generic proxy's stores; wgmma reads
                        # them through the async proxy
                        T.fence_proxy_async()
                        T.cp_async_barrier_noinc(keys_ready[stage])
                        T.barrier_arrive(keys_ready[stage])  # releases the flags and values


@T.macro
def attend_stages(Q, Out, t, h0, steps, scale, block_H, block_I, dim, tail_dim):
    # The consumer warpgroups of a program: token t's heads h0.. attend to each step's keys in
    # the two stages the producer fills, and O goes to Out. Returns what the producer fills (the
    # stages, their validity flags, their mbarriers) and the rows' lse, in warpgroup 0.
    half = dim // 2
    (Q_shared, KV_shared, valid, P_shared, rescale_shared, inverse_shared, scores, acc_left, acc_right, row_max,
     row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready, keys_free, p_ready, p_free,
     finished) = hopper_buffers(block_H, block_I, dim + tail_dim, half)
    with T.ws(0):
        T.set_max_nreg(240, 1)
        T.copy(Q[t, h0:h0 + block_H, :], Q_shared)
        scores_and_left_half(Q_shared, KV_shared, valid, P_shared, rescale_shared, inverse_shared, scores, acc_left,
                             row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready,
                             keys_free, p_ready, p_free, finished, steps, scale, block_H, block_I, half)
        T.copy(acc_left, Out[t, h0:h0 + block_H, 0:half])
    with T.ws(1):
        T.set_max_nreg(168, 1)
        right_half(KV_shared, P_shared, rescale_shared, inverse_shared, acc_right, keys_free, p_ready, p_free,
                   finished, steps, block_H, half, dim)
        T.copy(acc_right, Out[t, h0:h0 + block_H, half:dim])
    return KV_shared, valid, keys_ready, keys_free, lse


def hopper_buffers(block_H, block_I, width, half):
    # A program's tiles, fragments and mbarriers. keys_ready: a stage's rows landed (the
    # producer's cp.asyncs) and its validity is written (the producer's arrivals); keys_free:
    # both consumers are done with a stage; p_ready / p_free: P and the rescale factors in
    # shared memory, handed to warpgroup 1 and back; finished: warpgroup 0's reciprocal
    # denominators are in shared memory.
    return (T.alloc_shared((block_H, width), "bfloat16"), T.alloc_shared((2, block_I, width), "bfloat16"),
            T.alloc_shared((2, block_I), "bool"), T.alloc_shared((block_H, block_I), "bfloat16"),
            T.alloc_shared((block_H,), "float32"), T.alloc_shared((block_H,), "float32"),
            T.alloc_fragment((block_H, block_I), "float32"), T.alloc_fragment((block_H, half), "float32"),
            T.alloc_fragment((block_H, half), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_barrier([2 * CONSUMER_THREADS] * 2), T.alloc_barrier([2 * CONSUMER_THREADS] * 2),
            T.alloc_barrier(2 * CONSUMER_THREADS), T.alloc_barrier(2 * CONSUMER_THREADS),
            T.alloc_barrier(CONSUMER_THREADS))


@T.macro
def right_half(KV_shared, P_shared, rescale_shared, inverse_shared, acc_right, keys_free, p_ready, p_free, finished,
               steps, block_H, half, dim):
    # Warpgroup 1: the right half of O, from each step's P and rescale factors, over the
    # denominators when it returns.
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


@T.macro
def scores_and_left_half(Q_shared, KV_shared, valid, P_shared, rescale_shared, inverse_shared, scores, acc_left,
                         row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, lse, keys_ready,
                         keys_free, p_ready, p_free, finished, steps, scale, block_H, block_I, half):
    # Warpgroup 0, once Q is in Q_shared: every step's scores and softmax, and the left half of
    # O, over the denominators when it returns; lse, each row's natural log-sum-exp (+inf, with
    # O 0, for a row that had no valid key, as FlashMLA gives).
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
                row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I)
                T.copy(rescale, rescale_shared)
                T.copy(scores, P_shared)
                T.fence_proxy_async()
                T.barrier_arrive(p_ready)
                T.gemm(P_shared, KV_shared[stage, :, 0:half], acc_left)
                T.barrier_arrive(keys_free[stage])
    for h in T.Parallel(block_H):
        inverse_shared[h] = T.if_then_else(denominator[h] > 0, 1 / denominator[h], 0)
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))
    T.barrier_arrive(finished)
    for h, d in T.Parallel(block_H, half):
        acc_left[h, d] *= inverse_shared[h]


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


@T.macro
def row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M):
    # The rows' running max takes a key block's scores in; rescale is the factor what was summed
    # under the old max takes.
    T.copy(row_max, row_max_prev)
    T.reduce_max(scores, row_max, dim=1, clear=False)
    # A row that has seen no key yet keeps a max of -inf: its terms use 0 instead, so that
    # exp2(-inf - -inf) never makes a NaN.
    for i in T.Parallel(block_M):
        row_max_finite[i] = T.if_then_else(row_max[i] == -T.infinity("float32"), 0, row_max[i])
        rescale[i] = T.exp2((row_max_prev[i] - row_max_finite[i]) * scale)


@T.macro
def dequantize_step(Cache, Scales, slot_shared, KV_shared, stage, block_I):
    # The producer's part of a step's latent dims: each indexed token's FP8 values times their
    # group's scale, into the stage as bfloat16 (FlashMLA rounds so too); zeros for an invalid
    # token (slot -1), whatever its slot holds.
    for i, g, d in T.Parallel(block_I, FP8_DIM // FP8_GROUP, FP8_GROUP):
        slot = T.min(T.max(slot_shared[i], 0), Cache.shape[0] - 1)
        value = T.Cast("float32", T.reinterpret(Cache[slot, g * FP8_GROUP + d], "float8_e4m3"))
        KV_shared[stage, i, g * FP8_GROUP + d] = T.if_then_else(slot_shared[i] >= 0,
                                                                value * Scales[slot, FP8_DIM // 4 + g], 0)


@T.macro
def filled_row(j, lane):
    # The key row of a step that this producer thread fills in its j-th round: THREADS_A_ROW
    # threads a row, CONSUMER_THREADS // THREADS_A_ROW rows a round.
    return j * (CONSUMER_THREADS // THREADS_A_ROW) + lane // THREADS_A_ROW


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
def index_at(Indices, row, slot, topk, keys):
    # Indices[row, slot]; -1 past topk and for an invalid one.
    index = T.if_then_else(slot < topk, Indices[row, T.min(slot, topk - 1)], -1)
    return T.if_then_else((index >= 0) & (index < keys), index, -1)
