#!func main
#!config tilec.fast_math=true
#!bind LOG2E = 1.4426950408889634
#!bind T = module(tilec.language)
#!bind batch = 2
#!bind block_M = 64
#!bind block_N = 64
#!bind bshd = True
#!bind causal = False
#!bind dim = 64
#!bind divide_rows = func(divide_rows)
#!bind dtype = "float16"
#!bind forward_buffers = func(forward_buffers)
#!bind group = 4
#!bind heads_kv = 2
#!bind kv_shape = [2, 300, 2, 64]
#!bind load_rows = func(load_rows)
#!bind lse_shape = [2, 8, 1]
#!bind mask_scores = func(mask_scores)
#!bind num_splits = 1
#!bind num_stages = 1
#!bind o_dtype = "float16"
#!bind o_shape = [2, 1, 8, 64]
#!bind online_softmax = func(online_softmax)
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind row_max_step = func(row_max_step)
#!bind packed = 4
#!bind past = 299
#!bind q_shape = [2, 1, 8, 64]
#!bind scale = 0.18033688011112042
#!bind seq_kv = 300
#!bind seq_q = 1
#!bind split = False
#!bind split_blocks = 5
#!bind threads = 128
@T.prim_func
def main(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
         O: T.Tensor(o_shape, o_dtype), LSE: T.Tensor(lse_shape, "float32")):
    with T.Kernel(T.ceildiv(packed, block_M), heads_kv, batch * num_splits, threads=threads) as (bx, by, b_split):
        bz = b_split // num_splits
        s = b_split % num_splits
        (Q_shared, K_shared, V_shared, scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale,
         row_sum, denominator) = forward_buffers(block_M, block_N, dim, dtype)
        rows = bx * block_M

        for i, d in T.Parallel(block_M, dim):
            p = T.min(rows + i, packed - 1)  # rows past the last compute a copy of it, unwritten
            if bshd:
                Q_shared[i, d] = Q[bz, p // group, by * group + p % group, d]
            else:
                Q_shared[i, d] = Q[bz, by * group + p % group, p // group, d]
        T.fill(acc_o, 0)
        T.fill(denominator, 0)
        T.fill(row_max, -T.infinity("float32"))
        if causal:  # whole key blocks past the last position's diagonal are skipped
            last = T.min(seq_q - 1, (rows + block_M - 1) // group)
            blocks = T.max(0, T.min(T.ceildiv(seq_kv, block_N), T.ceildiv(last + 1 + past, block_N)))
        else:
            blocks = T.ceildiv(seq_kv, block_N)
        first = 0
        if split:
            first = s * split_blocks
            blocks = T.max(first, T.min(blocks, first + split_blocks))
        for k in T.Pipelined(first, blocks, num_stages=num_stages):
            keys = k * block_N
            load_rows(K, K_shared, bz, keys, by, bshd, block_N)
            T.gemm(Q_shared, K_shared, scores, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            mask_scores(scores, rows, keys, past, seq_kv, causal, block_M, block_N, group)
            online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum,
                           denominator, scale, block_M, block_N, dim)
            load_rows(V, V_shared, bz, keys, by, bshd, block_N)
            T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
        divide_rows(acc_o, denominator, block_M, dim)
        for i, d in T.Parallel(block_M, dim):
            p = rows + i
            if p < packed:
                value = acc_o[i, d]
                if split and bshd:
                    O[s, bz, p // group, by * group + p % group, d] = value
                elif split:
                    O[s, bz, by * group + p % group, p // group, d] = value
                elif bshd:
                    O[bz, p // group, by * group + p % group, d] = value
                else:
                    O[bz, by * group + p % group, p // group, d] = value
        for i in T.Parallel(block_M):
            p = rows + i
            if p < packed:
                lse = T.if_then_else(denominator[i] > 0, (row_max[i] * scale + T.log2(denominator[i])) / LOG2E,
                                     -T.infinity("float32"))
                if split:
                    LSE[s, bz, by * group + p % group, p // group] = lse
                else:
                    LSE[bz, by * group + p % group, p // group] = lse


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
def forward_buffers(block_M, block_N, dim, dtype):
    # The forward kernels' tiles: Q, K and V in shared memory; the scores, the probabilities,
    # the output accumulator and the online softmax's row statistics in registers.
    Q_shared = T.alloc_shared([block_M, dim], dtype)
    K_shared = T.alloc_shared([block_N, dim], dtype)
    V_shared = T.alloc_shared([block_N, dim], dtype)
    scores = T.alloc_fragment([block_M, block_N], "float32")
    probs = T.alloc_fragment([block_M, block_N], dtype)
    acc_o = T.alloc_fragment([block_M, dim], "float32")
    row_max = T.alloc_fragment([block_M], "float32")
    row_max_prev = T.alloc_fragment([block_M], "float32")
    row_max_finite = T.alloc_fragment([block_M], "float32")
    rescale = T.alloc_fragment([block_M], "float32")
    row_sum = T.alloc_fragment([block_M], "float32")
    denominator = T.alloc_fragment([block_M], "float32")
    return (Q_shared, K_shared, V_shared, scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale,
            row_sum, denominator)


@T.macro
def load_rows(X, tile, bz, start, head, bshd, rows):
    # Rows start.. of sequence bz, head `head` of a [batch, seq, heads, dim] (bshd) or
    # [batch, heads, seq, dim] tensor into `tile`.
    if bshd:
        T.copy(X[bz, start:start + rows, head, :], tile)
    else:
        T.copy(X[bz, head, start:start + rows, :], tile)


@T.macro
def mask_scores(scores, rows, keys, past, seq_kv, causal, block_M, block_N, group):
    # The scores of query rows rows.. and keys keys.. set to -inf for keys past the sequence and,
    # causal, past a row's diagonal (which, for a row of the sequence, is before its end). Row i
    # is query position (rows + i) // group: group > 1 packs each position's query heads into
    # consecutive rows. Only the blocks that hold such keys pay for the mask; the others keep
    # the gemm's scores as they are (the gemm clears its accumulator, which costs nothing on
    # wgmma: ptxas starts the first wgmma from zero registers).
    if causal:
        masked = rows // group + past < keys + block_N - 1
    else:
        masked = keys + block_N > seq_kv
    if masked:
        for i, j in T.Parallel(block_M, block_N):
            if causal:
                scores[i, j] = T.if_then_else((rows + i) // group + past >= keys + j, scores[i, j],
                                              -T.infinity("float32"))
            else:
                scores[i, j] = T.if_then_else(keys + j < seq_kv, scores[i, j], -T.infinity("float32"))


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
