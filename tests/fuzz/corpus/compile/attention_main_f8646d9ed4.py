#!target hip gfx90a
#!func main
#!config tilec.fast_math=true
#!bind LOG2E = 1.4426950408889634
#!bind T = module(tilec.language)
#!bind batch = 2
#!bind block_M = 64
#!bind block_N = 64
#!bind causal = True
#!bind dim = 64
#!bind divide_rows = func(divide_rows)
#!bind dtype = "bfloat16"
#!bind forward_buffers = func(forward_buffers)
#!bind group = 4
#!bind heads = 8
#!bind heads_kv = 2
#!bind mask_scores = func(mask_scores)
#!bind max_seq_q = 500
#!bind num_stages = 2
#!bind online_softmax = func(online_softmax)
#!bind rescale_output = func(rescale_output)
#!bind row_exp_step = func(row_exp_step)
#!bind row_max_step = func(row_max_step)
#!bind scale = 0.14426950408889636
#!bind threads = 128
#!bind total_kv = 1300
#!bind total_q = 900
@T.prim_func
def main(Q: T.Tensor([total_q, heads, dim], dtype), K: T.Tensor([total_kv, heads_kv, dim], dtype),
         V: T.Tensor([total_kv, heads_kv, dim], dtype), cu_seqlens_q: T.Tensor([batch + 1], "int32"),
         cu_seqlens_k: T.Tensor([batch + 1], "int32"), O: T.Tensor([total_q, heads, dim], dtype),
         LSE: T.Tensor([heads, total_q], "float32")):
    with T.Kernel(T.ceildiv(max_seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
        (Q_shared, K_shared, V_shared, scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale,
         row_sum, denominator) = forward_buffers(block_M, block_N, dim, dtype)
        head_kv = by // group
        q_start = cu_seqlens_q[bz]
        q_len = cu_seqlens_q[bz + 1] - q_start
        k_start = cu_seqlens_k[bz]
        k_len = cu_seqlens_k[bz + 1] - k_start
        past = k_len - q_len
        rows = bx * block_M

        T.copy(Q[q_start + rows:q_start + rows + block_M, by, :], Q_shared)
        T.fill(acc_o, 0)
        T.fill(denominator, 0)
        T.fill(row_max, -T.infinity("float32"))
        if causal:
            blocks = T.max(0, T.min(T.ceildiv(k_len, block_N), T.ceildiv(rows + block_M + past, block_N)))
        else:
            blocks = T.ceildiv(k_len, block_N)
        for k in T.Pipelined(blocks, num_stages=num_stages):
            keys = k * block_N
            T.copy(K[k_start + keys:k_start + keys + block_N, head_kv, :], K_shared)
            T.gemm(Q_shared, K_shared, scores, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            mask_scores(scores, rows, keys, past, k_len, causal, block_M, block_N, 1)
            online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum,
                           denominator, scale, block_M, block_N, dim)
            T.copy(V[k_start + keys:k_start + keys + block_N, head_kv, :], V_shared)
            T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
        divide_rows(acc_o, denominator, block_M, dim)
        for i, j in T.Parallel(block_M, dim):
            if rows + i < q_len:
                O[q_start + rows + i, by, j] = acc_o[i, j]
        for i in T.Parallel(block_M):
            if rows + i < q_len:
                LSE[by, q_start + rows + i] = T.if_then_else(
                    denominator[i] > 0, (row_max[i] * scale + T.log2(denominator[i])) / LOG2E, -T.infinity("float32"))


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
