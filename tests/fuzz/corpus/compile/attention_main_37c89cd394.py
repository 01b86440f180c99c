#!target hip gfx90a
#!func main
#!config tilec.fast_math=true
#!config tilec.warp_specialize=false
#!bind T = module(tilec.language)
#!bind add_rows = func(add_rows)
#!bind backward_buffers = func(backward_buffers)
#!bind backward_scores = func(backward_scores)
#!bind backward_step = func(backward_step)
#!bind LOG2E = 1.4426950408889634
#!bind batch = 2
#!bind block_M = 64
#!bind block_N = 32
#!bind bshd = True
#!bind causal = True
#!bind dim = 64
#!bind dq_in_shared = False
#!bind dtype = "bfloat16"
#!bind group = 4
#!bind heads = 8
#!bind heads_kv = 2
#!bind kv_shape = [2, 1500, 2, 64]
#!bind load_rows = func(load_rows)
#!bind num_stages = 2
#!bind past = 500
#!bind q_shape = [2, 1000, 8, 64]
#!bind scale = 0.14426950408889636
#!bind seq_kv = 1500
#!bind seq_q = 1000
#!bind sm_scale = 0.1
#!bind step_head_and_rows = func(step_head_and_rows)
#!bind threads = 128
@T.prim_func
def main(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype), V: T.Tensor(kv_shape, dtype),
         dO: T.Tensor(q_shape, dtype), LSE: T.Tensor([batch, heads, seq_q], "float32"),
         Delta: T.Tensor([batch, heads, seq_q], "float32"), dQ_acc: T.Tensor(q_shape, "float32"),
         dK: T.Tensor(kv_shape, dtype), dV: T.Tensor(kv_shape, dtype)):
    with T.Kernel(T.ceildiv(seq_kv, block_M), heads_kv, batch, threads=threads) as (bx, by, bz):
        (K_shared, V_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t, dscores_t,
         dk, dv, dq) = backward_buffers(block_M, block_N, dim, dtype)
        if dq_in_shared:
            dq_shared = T.alloc_shared([block_N, dim], "float32")
        keys = bx * block_M
        load_rows(K, K_shared, bz, keys, by, bshd, block_M)
        load_rows(V, V_shared, bz, keys, by, bshd, block_M)
        T.clear(dk)
        T.clear(dv)
        # Causal: query blocks before the first row that sees these keys are skipped.
        first = T.max(0, (keys - past) // block_N) if causal else 0
        # One pipelined loop over (query head, query block) pairs: the stages run on from
        # one query head to the next.
        q_blocks = T.ceildiv(seq_q, block_N) - first
        steps = group * q_blocks
        for step in T.Pipelined(steps, num_stages=num_stages):
            head, rows = step_head_and_rows(step, by, group, first, q_blocks, block_N)
            load_rows(Q, Q_shared, bz, rows, head, bshd, block_N)
            load_rows(dO, dO_shared, bz, rows, head, bshd, block_N)
            T.copy(LSE[bz, head, rows:rows + block_N], lse)
            T.copy(Delta[bz, head, rows:rows + block_N], delta)
            backward_scores(K_shared, V_shared, Q_shared, dO_shared, probs_t, dprobs_t)
            if dq_in_shared:
                # The step before's dQ share, added under this step's first gemms: the
                # stage's barrier before them also ends the share's writes, which took a
                # barrier of their own.
                if step > 0:
                    head_before, rows_before = step_head_and_rows(step - 1, by, group, first, q_blocks, block_N)
                    add_rows(dQ_acc, dq_shared, bz, rows_before, head_before, bshd, block_N)
            backward_step(K_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t,
                          dscores_t, dk, dv, dq, keys, rows, past, seq_q, seq_kv, causal, scale, sm_scale, block_M,
                          block_N)
            if dq_in_shared:
                T.copy(dq, dq_shared)
            else:
                add_rows(dQ_acc, dq, bz, rows, head, bshd, block_N)
            T.wait_wgmma(0)
        if dq_in_shared:
            if steps > 0:
                head_last, rows_last = step_head_and_rows(steps - 1, by, group, first, q_blocks, block_N)
                add_rows(dQ_acc, dq_shared, bz, rows_last, head_last, bshd, block_N)
        if bshd:
            T.copy(dk, dK[bz, keys:keys + block_M, by, :])
            T.copy(dv, dV[bz, keys:keys + block_M, by, :])
        else:
            T.copy(dk, dK[bz, by, keys:keys + block_M, :])
            T.copy(dv, dV[bz, by, keys:keys + block_M, :])


@T.macro
def add_rows(X, tile, bz, start, head, bshd, rows):
    # `tile` added (atomically) into rows start.. of sequence bz, head `head`, as load_rows reads.
    if bshd:
        T.atomic_add(X[bz, start:start + rows, head, :], tile)
    else:
        T.atomic_add(X[bz, head, start:start + rows, :], tile)


@T.macro
def backward_buffers(block_M, block_N, dim, dtype):
    # The backward kernels' tiles (block_M keys, block_N query rows a step): K and V, the
    # step's Q, dO, dS, LSE and Delta in shared memory; P^T, dP^T, dS^T and the gradients'
    # accumulators in registers.
    K_shared = T.alloc_shared([block_M, dim], dtype)
    V_shared = T.alloc_shared([block_M, dim], dtype)
    Q_shared = T.alloc_shared([block_N, dim], dtype)
    dO_shared = T.alloc_shared([block_N, dim], dtype)
    dS_shared = T.alloc_shared([block_M, block_N], dtype)
    lse = T.alloc_shared([block_N], "float32")
    delta = T.alloc_shared([block_N], "float32")
    probs_t = T.alloc_fragment([block_M, block_N], "float32")
    probs_t_cast = T.alloc_fragment([block_M, block_N], dtype)
    dprobs_t = T.alloc_fragment([block_M, block_N], "float32")
    dscores_t = T.alloc_fragment([block_M, block_N], dtype)
    dk = T.alloc_fragment([block_M, dim], "float32")
    dv = T.alloc_fragment([block_M, dim], "float32")
    dq = T.alloc_fragment([block_N, dim], "float32")
    return (K_shared, V_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t, dscores_t,
            dk, dv, dq)


@T.macro
def backward_scores(K_shared, V_shared, Q_shared, dO_shared, probs_t, dprobs_t):
    # A backward step's first gemms, S^T = K Q^T and dP^T = V dO^T, issued together (on Hopper
    # left in flight for backward_step).
    T.gemm(K_shared, Q_shared, probs_t, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow,
           wg_wait=-1)
    T.gemm(V_shared, dO_shared, dprobs_t, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow,
           wg_wait=-1)


@T.macro
def backward_step(K_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t,
                  dscores_t, dk, dv, dq, keys, rows, past, seq_q, seq_kv, causal, scale, sm_scale, block_M, block_N):
    # The rest of one query block's share of the backward pass for a block of keys, after
    # backward_scores, all transposed (keys are rows): dV += P^T dO and dK += dS^T Q accumulate,
    # and dq = dS K is the block's dQ share. On Hopper the gemms are asynchronous (elsewhere each
    # finishes where it stands): P^T is computed under dP^T's gemm, dS^T under dV's, and dK's
    # gemm runs on while the caller stores dq, which then waits for it (T.wait_wgmma(0) before
    # the iteration ends: dK's gemm reads the Q stage).
    T.wait_wgmma(1)
    # P^T from the forward pass's log-sum-exp. Keys and rows past the ends, and causal, rows
    # before a key's diagonal, have none: only the blocks that hold such pairs pay for the mask,
    # a select after the exp (whose value there, even inf or NaN, it drops).
    for i, j in T.Parallel(block_M, block_N):
        probs_t[i, j] = T.exp2(probs_t[i, j] * scale - lse[j] * LOG2E)
    if causal:
        masked = (rows + block_N > seq_q) | (keys + block_M > seq_kv) | (rows + past < keys + block_M - 1)
    else:
        masked = (rows + block_N > seq_q) | (keys + block_M > seq_kv)
    if masked:
        for i, j in T.Parallel(block_M, block_N):
            seen = (rows + j < seq_q) & (keys + i < seq_kv)
            if causal:
                seen = seen & (rows + j + past >= keys + i)
            probs_t[i, j] = T.if_then_else(seen, probs_t[i, j], 0)
    T.copy(probs_t, probs_t_cast)
    T.gemm(probs_t_cast, dO_shared, dv, policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)
    T.wait_wgmma(1)
    for i, j in T.Parallel(block_M, block_N):
        dscores_t[i, j] = probs_t[i, j] * (dprobs_t[i, j] - delta[j]) * sm_scale
    T.copy(dscores_t, dS_shared)
    T.gemm(dS_shared, K_shared, dq, transpose_A=True, clear_accum=True, wg_wait=-1)
    T.gemm(dscores_t, Q_shared, dk, policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)
    T.wait_wgmma(1)


@T.macro
def load_rows(X, tile, bz, start, head, bshd, rows):
    # Rows start.. of sequence bz, head `head` of a [batch, seq, heads, dim] (bshd) or
    # [batch, heads, seq, dim] tensor into `tile`.
    if bshd:
        T.copy(X[bz, start:start + rows, head, :], tile)
    else:
        T.copy(X[bz, head, start:start + rows, :], tile)


@T.macro
def step_head_and_rows(step, by, group, first, q_blocks, block_N):
    # The query head and first row of the backward's step `step` over (query head, query block)
    # pairs. With one query head a K/V head (no GQA) the head is the program's: no division by
    # the run-time block count (causal) each step.
    if group == 1:
        return by, (first + step) * block_N
    return by * group + step // q_blocks, (first + step % q_blocks) * block_N
