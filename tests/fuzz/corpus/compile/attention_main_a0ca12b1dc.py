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
#!bind group = 1
#!bind heads = 4
#!bind kv_shape = [2, 70, 4, 64]
#!bind load_rows = func(load_rows)
#!bind lse_shape = [2, 4, 70]
#!bind mask_scores = func(mask_scores)
#!bind num_splits = 1
#!bind num_stages = 1
#!bind o_dtype = "float16"
#!bind o_shape = [2, 70, 4, 64]
#!bind online_softmax = func(online_softmax)
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind row_max_step = func(row_max_step)
#!bind overlap = False
#!bind past = 0
#!bind q_shape = [2, 70, 4, 64]
#!bind scale = 0.12623581607778428
#!bind seq_kv = 70
#!bind seq_q = 70
#!bind split = False
#!bind split_blocks = 2
#!bind threads = 128
#!bind zigzag = 0
@T.prim_func
def main(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
         O: T.Tensor(o_shape, o_dtype), LSE: T.Tensor(lse_shape, "float32")):
    with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch * num_splits, threads=threads) as (bx, by, b_split):
        bz = b_split // num_splits
        (Q_shared, K_shared, V_shared, scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale,
         row_sum, denominator) = forward_buffers(block_M, block_N, dim, dtype)
        lse = T.alloc_fragment([block_M], "float32")
        head_kv = by // group
        # Causal: query blocks run up one (head, sequence) and down the next, so that a
        # persistent launch, whose blocks take every 132nd tile, gives each block as many
        # long tiles as short ones.
        q_block = bx + zigzag * ((by + b_split * heads) % 2) * (T.ceildiv(seq_q, block_M) - 1 - 2 * bx)
        rows = q_block * block_M

        load_rows(Q, Q_shared, bz, rows, by, bshd, block_M)
        T.fill(acc_o, 0)
        T.fill(denominator, 0)
        T.fill(row_max, -T.infinity("float32"))
        # causal: whole key blocks past the last row's diagonal are skipped
        end = (T.max(0, T.min(T.ceildiv(seq_kv, block_N), T.ceildiv(rows + block_M + past, block_N))) if causal
               else T.ceildiv(seq_kv, block_N))
        first = 0
        blocks = end
        if split:
            first = b_split % num_splits * split_blocks
            blocks = T.max(first, T.min(end, first + split_blocks))
        if overlap:
            # With no key block (causal rows before every key, or no keys), the first
            # block's scores are all masked, its P is 0, and the last P V adds nothing.
            # V_last's start reads `end`, set once, so that on Hopper the producer loads it
            # (by TMA, after its loop's copies) and the consumers wait for it only before
            # the last gemm.
            K_first = T.alloc_shared([block_N, dim], dtype)
            V_last = T.alloc_shared([block_N, dim], dtype)
            load_rows(K, K_first, bz, 0, head_kv, bshd, block_N)
            load_rows(V, V_last, bz, T.max(end - 1, 0) * block_N, head_kv, bshd, block_N)
            T.gemm(Q_shared, K_first, scores, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            mask_scores(scores, rows, 0, past, seq_kv, causal, block_M, block_N, 1)
            row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M)
            row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N)
            T.copy(scores, probs)
            for k in T.Pipelined(1, end, num_stages=num_stages):
                step_keys = k * block_N  # (not `keys`: a name assigned twice is a variable)
                load_rows(K, K_shared, bz, step_keys, head_kv, bshd, block_N)
                T.gemm(Q_shared, K_shared, scores, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)
                load_rows(V, V_shared, bz, step_keys - block_N, head_kv, bshd, block_N)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)
                T.wait_wgmma(1)
                mask_scores(scores, rows, step_keys, past, seq_kv, causal, block_M, block_N, 1)
                row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M)
                row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N)
                T.wait_wgmma(0)
                rescale_output(acc_o, rescale, block_M, dim)
                T.copy(scores, probs)
            T.gemm(probs, V_last, acc_o, policy=T.GemmWarpPolicy.FullRow)
        else:
            for k in T.Pipelined(first, blocks, num_stages=num_stages):
                keys = k * block_N
                load_rows(K, K_shared, bz, keys, head_kv, bshd, block_N)
                T.gemm(Q_shared, K_shared, scores, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullRow)
                mask_scores(scores, rows, keys, past, seq_kv, causal, block_M, block_N, 1)
                online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum,
                               denominator, scale, block_M, block_N, dim)
                load_rows(V, V_shared, bz, keys, head_kv, bshd, block_N)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
        divide_rows(acc_o, denominator, block_M, dim)
        for i in T.Parallel(block_M):
            lse[i] = T.if_then_else(denominator[i] > 0, (row_max[i] * scale + T.log2(denominator[i])) / LOG2E,
                                    -T.infinity("float32"))
        if split:
            if bshd:
                T.copy(acc_o, O[b_split % num_splits, bz, rows:rows + block_M, by, :])
            else:
                T.copy(acc_o, O[b_split % num_splits, bz, by, rows:rows + block_M, :])
            T.copy(lse, LSE[b_split % num_splits, bz, by, rows:rows + block_M])
        elif bshd:
            T.copy(acc_o, O[bz, rows:rows + block_M, by, :])
            T.copy(lse, LSE[bz, by, rows:rows + block_M])
        else:
            T.copy(acc_o, O[bz, by, rows:rows + block_M, :])
            T.copy(lse, LSE[bz, by, rows:rows + block_M])


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
