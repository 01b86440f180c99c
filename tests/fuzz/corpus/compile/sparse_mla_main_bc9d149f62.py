#!func main
#!config tilec.fast_math=true
#!bind T = module(tilec.language)
#!bind attend_gathered = func(attend_gathered)
#!bind online_softmax = func(online_softmax)
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind row_max_step = func(row_max_step)
#!bind block_H = 16
#!bind block_I = 32
#!bind dim = 64
#!bind finish_rows = func(finish_rows)
#!bind LOG2E = 1.4426950408889634
#!bind divide_rows = func(divide_rows)
#!bind gather_indices = func(gather_indices)
#!bind index_at = func(index_at)
#!bind heads = 16
#!bind num_stages = 1
#!bind scale = 0.1472444460259031
#!bind seq = 3
#!bind seq_kv = 90
#!bind sparse_buffers = func(sparse_buffers)
#!bind start_rows = func(start_rows)
#!bind tail_dim = 32
#!bind threads = 128
#!bind topk = 8
@T.prim_func
def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
         KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
         Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
    with T.Kernel(seq, T.ceildiv(heads, block_H), threads=threads) as (t, hb):
        (Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores, probs, acc_o, row_max,
         row_max_prev, row_max_finite, rescale, row_sum, denominator, lse) = sparse_buffers(block_H, block_I, dim,
                                                                                             tail_dim)
        h0 = hb * block_H
        start_rows(Q, t, h0, Q_shared, Q_tail_shared, acc_o, row_max, denominator, block_H, dim, tail_dim)
        for k in T.Pipelined(T.ceildiv(topk, block_I), num_stages=num_stages):
            gather_indices(Indices, t, k, topk, seq_kv, index_shared, block_I)
            # invalid keys gather zeros (and their scores are masked)
            for i, d in T.Parallel(block_I, dim):
                KV_shared[i, d] = T.if_then_else(index_at(Indices, t, k * block_I + i, topk, seq_kv) >= 0,
                                                 KV[T.max(index_at(Indices, t, k * block_I + i, topk, seq_kv), 0),
                                                    0, d], 0)
            for i, d in T.Parallel(block_I, tail_dim):
                K_tail_shared[i, d] = T.if_then_else(index_at(Indices, t, k * block_I + i, topk, seq_kv) >= 0,
                                                     KV[T.max(index_at(Indices, t, k * block_I + i, topk, seq_kv),
                                                              0), 0, dim + d], 0)
            attend_gathered(Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores,
                            probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator,
                            scale, block_H, block_I, dim)
        finish_rows(acc_o, row_max, denominator, lse, scale, block_H, dim)
        T.copy(acc_o, Out[t, h0:h0 + block_H, :])
        T.copy(lse, LSE[t, h0:h0 + block_H])


@T.macro
def attend_gathered(Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores, probs, acc_o,
                    row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I, dim):
    # One step over block_I gathered keys: scores by two gemms (latent, RoPE tail), the invalid
    # keys' masked, the online softmax, and O += P V. The score gemms are left in flight (on
    # Hopper) until the mask reads them: a pipelined loop issues its next gathers under them.
    T.gemm(Q_shared, KV_shared, scores, transpose_B=True, clear_accum=True, wg_wait=-1)
    T.gemm(Q_tail_shared, K_tail_shared, scores, transpose_B=True, wg_wait=-1)
    T.wait_wgmma(0)
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] = T.if_then_else(index_shared[i] >= 0, scores[h, i], -T.infinity("float32"))
    online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale,
                   block_H, block_I, dim)
    T.copy(probs, P_shared)
    T.gemm(P_shared, KV_shared, acc_o)


@T.macro
def online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale,
                   block_M, block_N, dim):
    # One key block's step: the rows' running max takes the block's scores in, acc_o and the
    # running sum are rescaled to it, and probs = exp2((scores - max) * scale) in 16 bits.
    row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M)
    rescale_output(acc_o, rescale, block_M, dim)
    row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N)
    T.copy(scores, probs)


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
def finish_rows(acc_o, row_max, denominator, lse, scale, block_H, dim):
    # O over each row's denominator, and its natural log-sum-exp: +inf (and O 0) for a row that
    # had no valid key, as FlashMLA gives.
    divide_rows(acc_o, denominator, block_H, dim)
    for h in T.Parallel(block_H):
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))


@T.macro
def divide_rows(acc_o, denominator, block_M, dim):
    # acc_o's rows over their softmax denominators (0 for a row that saw no key), by one
    # reciprocal a row: a division an element costs the tile a MUFU.RCP each, as many as the
    # exps of one key block.
    inverse = T.alloc_fragment([block_M], "float32")
    for i in T.Parallel(block_M):
        inverse[i] = T.if_then_else(denominator[i] > 0, 1 / denominator[i], 0)
    for i, j in T.Parallel(block_M, dim):
        acc_o[i, j] *= inverse[i]


@T.macro
def gather_indices(Indices, row, k, topk, keys, index_shared, block_I):
    # Step k's indices of `row` into index_shared.
    for i in T.Parallel(block_I):
        index_shared[i] = index_at(Indices, row, k * block_I + i, topk, keys)


@T.macro
def index_at(Indices, row, slot, topk, keys):
    # Indices[row, slot]; -1 past topk and for an invalid one.
    index = T.if_then_else(slot < topk, Indices[row, T.min(slot, topk - 1)], -1)
    return T.if_then_else((index >= 0) & (index < keys), index, -1)


def sparse_buffers(block_H, block_I, dim, tail_dim):
    """A program's tiles: the query heads' latent and RoPE parts, the gathered keys' (the latent
    part is the value too) and their indices (-1: invalid), P (it reaches the value gemm through
    shared memory: that gemm splits the value's dims over the warpgroups, the score gemm its
    keys), and the online softmax's state."""
    return (T.alloc_shared((block_H, dim), "bfloat16"), T.alloc_shared((block_H, tail_dim), "bfloat16"),
            T.alloc_shared((block_I, dim), "bfloat16"), T.alloc_shared((block_I, tail_dim), "bfloat16"),
            T.alloc_shared((block_I,), "int32"), T.alloc_shared((block_H, block_I), "bfloat16"),
            T.alloc_fragment((block_H, block_I), "float32"), T.alloc_fragment((block_H, block_I), "bfloat16"),
            T.alloc_fragment((block_H, dim), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"))


@T.macro
def start_rows(Q, t, h0, Q_shared, Q_tail_shared, acc_o, row_max, denominator, block_H, dim, tail_dim):
    # Token t's heads h0.. into shared memory (latent part, RoPE tail), and the online
    # softmax's state at its start.
    T.copy(Q[t, h0:h0 + block_H, 0:dim], Q_shared)
    T.copy(Q[t, h0:h0 + block_H, dim:dim + tail_dim], Q_tail_shared)
    T.fill(acc_o, 0)
    T.fill(denominator, 0)
    T.fill(row_max, -T.infinity("float32"))
