"""FlashAttention as library kernels: O = softmax(Q K^T * scale) V, and its gradients.

One block of query rows a program; the K and V tiles stream through shared memory in a
pipelined loop while an online softmax keeps each row's running max and sum in registers, and
the probabilities, converted to 16 bits, are the register operand of O += P V. On Hopper the
loop is warp-specialized (a TMA producer warpgroup and two consumer warpgroups, wgmma) and, at
head dims 64 and 128, in FlashAttention-3's order: each step's two gemms are asynchronous and
the softmax runs under the second, the two warpgroups taking turns at the tensor cores. On
other GPUs it runs on mma.sync with cp.async, and on the CPU backend elsewhere.

Conventions are FlashAttention's: causal attention is aligned bottom-right when the query and
key lengths differ (query row i sees keys up to i + seq_kv - seq_q), a row that sees no key
gives 0 and a log-sum-exp of -inf, and grouped-query attention shares each K/V head among
heads // heads_kv query heads.

The backward pass is FlashAttention-2's: Delta = rowsum(O * dO) first, then a program per
block of keys recomputes P from the saved log-sum-exp, sums dK and dV over every query block
(and head) that sees those keys, and adds each query block's share of dQ atomically into a
float32 buffer, cast to the input type at the end. On Hopper the step's gemms are asynchronous,
and its dQ share is added from shared memory by TMA reduce-adds.
"""

import functools
import math

import tilec
import tilec.language as T
from tilec import capture

from .device import for_device_of, is_amd, is_hopper, multiprocessors, on_gpu

LOG2E = 1.4426950408889634  # softmax by exp2: e^x = 2^(x log2(e))
HEAD_DIMS = (64, 128, 256)

# Tile configurations by target and head dim: block_M query rows, block_N keys a step.
HOPPER_CONFIGS = {64: dict(block_M=128, block_N=128, num_stages=2, threads=256),
                  128: dict(block_M=128, block_N=128, num_stages=2, threads=256),
                  256: dict(block_M=128, block_N=64, num_stages=2, threads=256)}
# attention_forward's overlap (FlashAttention-3's order) on Hopper, at the head dims where its
# two more K and V tiles fit shared memory beside two stages. Measured on the H200 (S = 4096,
# 2026-12-02, cuDNN's rate in the same run): d = 128 from 0.86x to 0.96x non-causal and from
# 0.83x to 0.92x causal; d = 64 from 0.88x to 0.89x and from 0.79x to 0.82x.
HOPPER_OVERLAP_DIMS = (64, 128)
GPU_CONFIGS = {64: dict(block_M=64, block_N=64, num_stages=2, threads=128),
               128: dict(block_M=64, block_N=64, num_stages=2, threads=128),
               256: dict(block_M=64, block_N=32, num_stages=2, threads=128)}
# AMD's GPUs (MI50, MI200, MI300) give a block 64 KiB of LDS: narrower key blocks from
# d = 128 on, one stage at d = 256; these fit on each of gfx906, gfx90a and gfx940 (where the
# gemms run on MFMA; gfx906 has none and keeps P in LDS). None is measured (no AMD GPU here).
AMD_CONFIGS = {64: dict(block_M=64, block_N=64, num_stages=2, threads=128),
               128: dict(block_M=64, block_N=32, num_stages=2, threads=128),
               256: dict(block_M=32, block_N=32, num_stages=1, threads=128)}
CPU_CONFIG = dict(block_M=64, block_N=64, num_stages=1, threads=128)
MAX_SPLITS = 64  # split-KV's most splits of the keys
# The backward pass's: block_M keys a program, block_N query rows a step. On Hopper at d = 128
# two warpgroups take 64 keys each. Every gemm must fit wgmma's 64-row strips: at d = 64 the
# dQ gemm of 128-key blocks (64 x 64 over two warpgroups) does not, nor at d = 256 one of
# 32-row steps, and either would run on scalar FMA.
# dq_in_shared: each step's dQ share goes to dQ_acc by TMA reduce-adds from shared memory;
# measured on the H200 (d = 128, S = 4096, 2026-12-03), per-element atomics from registers held
# the backward at 287 TFLOP/s against 372 (cuDNN 484).
HOPPER_BACKWARD_CONFIGS = {64: dict(block_M=64, block_N=64, num_stages=2, threads=128, dq_in_shared=True),
                           128: dict(block_M=128, block_N=64, num_stages=3, threads=256, dq_in_shared=True),
                           256: dict(block_M=64, block_N=64, num_stages=1, threads=128, dq_in_shared=True)}
GPU_BACKWARD_CONFIGS = {64: dict(block_M=64, block_N=64, num_stages=2, threads=128),
                        128: dict(block_M=64, block_N=64, num_stages=2, threads=128),
                        256: dict(block_M=64, block_N=32, num_stages=1, threads=128)}
AMD_BACKWARD_CONFIGS = {64: dict(block_M=64, block_N=32, num_stages=2, threads=128),
                        128: dict(block_M=64, block_N=32, num_stages=1, threads=128),
                        256: dict(block_M=32, block_N=16, num_stages=1, threads=128)}
# exp2 and the divisions by ex2.approx and approximate division on CUDA (no effect elsewhere):
# their error, a few ulp of float32, is far below what the 16-bit output keeps.
FAST_MATH = {"tilec.fast_math": True}
# The backward pass runs its copies on cp.async stages: measured on the H200 (d = 128, S = 4096,
# 2026-12-02), a TMA producer warpgroup made it slower, 261 against 284 TFLOP/s non-causal and
# 143 against 257 causal.
BACKWARD_PASS_CONFIGS = {**FAST_MATH, "tilec.warp_specialize": False}


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


# lazy_row_max_step's bound on how far (in powers of 2) a step's scores may rise above the max
# they are taken at: their exps reach at most 2^8, which bf16 probabilities and float sums hold.
LAZY_MAX_RISE = 8


@T.macro
def lazy_row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M):
    # row_max_step, except that a row keeps its old max unless the block's rises more than
    # 2^LAZY_MAX_RISE above it, with rescale exactly 1: after a row's first blocks its max seldom
    # moves that far, and rescale_moved_rows skips the rows that did not move. The softmax is the
    # same at any max the exps don't overflow at.
    T.copy(row_max, row_max_prev)
    T.reduce_max(scores, row_max, dim=1, clear=False)
    for i in T.Parallel(block_M):
        moved = (row_max[i] - row_max_prev[i]) * scale > LAZY_MAX_RISE  # a first finite max: inf > 8
        row_max[i] = T.if_then_else(moved, row_max[i], row_max_prev[i])
        row_max_finite[i] = T.if_then_else(row_max[i] == -T.infinity("float32"), 0, row_max[i])
        rescale[i] = T.if_then_else(moved, T.exp2((row_max_prev[i] - row_max_finite[i]) * scale), 1)


@T.macro
def row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N):
    # scores = exp2((scores - max) * scale), and the rows' running sum rescaled and added to.
    for i, j in T.Parallel(block_M, block_N):
        scores[i, j] = T.exp2(scores[i, j] * scale - row_max_finite[i] * scale)
    T.reduce_sum(scores, row_sum, dim=1)
    for i in T.Parallel(block_M):
        denominator[i] = denominator[i] * rescale[i] + row_sum[i]


@T.macro
def rescale_output(acc_o, rescale, block_M, dim):
    for i, j in T.Parallel(block_M, dim):
        acc_o[i, j] *= rescale[i]


@T.macro
def rescale_moved_rows(acc_o, rescale, block_M, dim):
    # rescale_output for the rows whose factor is not 1: the lowering tests a row once and
    # branches around its elements.
    for i, j in T.Parallel(block_M, dim):
        if rescale[i] != 1:
            acc_o[i, j] *= rescale[i]


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
def online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale,
                   block_M, block_N, dim):
    # One key block's step: the rows' running max takes the block's scores in, acc_o and the
    # running sum are rescaled to it, and probs = exp2((scores - max) * scale) in 16 bits.
    row_max_step(scores, row_max, row_max_prev, row_max_finite, rescale, scale, block_M)
    rescale_output(acc_o, rescale, block_M, dim)
    row_exp_step(scores, row_max_finite, rescale, row_sum, denominator, scale, block_M, block_N)
    T.copy(scores, probs)


@T.macro
def load_rows(X, tile, bz, start, head, bshd, rows):
    # Rows start.. of sequence bz, head `head` of a [batch, seq, heads, dim] (bshd) or
    # [batch, heads, seq, dim] tensor into `tile`.
    if bshd:
        T.copy(X[bz, start:start + rows, head, :], tile)
    else:
        T.copy(X[bz, head, start:start + rows, :], tile)


@T.macro
def add_rows(X, tile, bz, start, head, bshd, rows):
    # `tile` added (atomically) into rows start.. of sequence bz, head `head`, as load_rows reads.
    if bshd:
        T.atomic_add(X[bz, start:start + rows, head, :], tile)
    else:
        T.atomic_add(X[bz, head, start:start + rows, :], tile)


@T.macro
def step_head_and_rows(step, by, group, first, q_blocks, block_N):
    # The query head and first row of the backward's step `step` over (query head, query block)
    # pairs. With one query head a K/V head (no GQA) the head is the program's: no division by
    # the run-time block count (causal) each step.
    if group == 1:
        return by, (first + step) * block_N
    return by * group + step // q_blocks, (first + step % q_blocks) * block_N


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


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def attention_forward(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, sm_scale, layout="bshd",
                      dtype="float16", block_M=128, block_N=128, num_stages=2, threads=256, num_splits=1,
                      overlap=False):
    # num_splits > 1 (split-KV, flash decoding): each program takes one of num_splits equal runs
    # of key blocks, and O and LSE get a leading split dim, O in float32, each split's result
    # normalized on its own; attention_combine merges them.
    # overlap (Hopper's asynchronous wgmma, num_splits 1): FlashAttention-3's order. Each step
    # issues S = Q K^T for its key block and O += P V for the previous block's P, and computes
    # the softmax of S while the second gemm runs; the first block's S comes before the loop
    # and the last block's P V after it, each through a tile of its own, loaded with Q.
    group = heads // heads_kv
    past = seq_kv - seq_q  # causal, bottom-right: query row i sees keys 0 .. i + past
    scale = sm_scale * LOG2E
    bshd = layout == "bshd"
    q_shape = [batch, seq_q, heads, dim] if bshd else [batch, heads, seq_q, dim]
    kv_shape = [batch, seq_kv, heads_kv, dim] if bshd else [batch, heads_kv, seq_kv, dim]
    split = num_splits > 1
    o_shape, o_dtype = ([num_splits] + q_shape, "float32") if split else (q_shape, dtype)
    lse_shape = [num_splits, batch, heads, seq_q] if split else [batch, heads, seq_q]
    split_blocks = T.ceildiv(T.ceildiv(seq_kv, block_N), num_splits)
    zigzag = 1 if causal else 0

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

    return main


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def attention_forward_packed(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, sm_scale, layout="bshd",
                             dtype="float16", block_M=128, block_N=128, num_stages=2, threads=256, num_splits=1):
    # attention_forward for grouped-query attention with few queries (decoding): a program's
    # rows are (query position, query head) pairs of one K/V head, the heads of a position
    # consecutive, so a group's heads share each K and V tile and fill the block's rows.
    # Outputs and num_splits as attention_forward's.
    group = heads // heads_kv
    packed = seq_q * group
    past = seq_kv - seq_q
    scale = sm_scale * LOG2E
    bshd = layout == "bshd"
    q_shape = [batch, seq_q, heads, dim] if bshd else [batch, heads, seq_q, dim]
    kv_shape = [batch, seq_kv, heads_kv, dim] if bshd else [batch, heads_kv, seq_kv, dim]
    split = num_splits > 1
    o_shape, o_dtype = ([num_splits] + q_shape, "float32") if split else (q_shape, dtype)
    lse_shape = [num_splits, batch, heads, seq_q] if split else [batch, heads, seq_q]
    split_blocks = T.ceildiv(T.ceildiv(seq_kv, block_N), num_splits)

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

    return main


@tilec.jit(out_idx=[2, 3])
def attention_combine(num_splits, batch, heads, seq_q, dim, layout="bshd", dtype="float16", block_M=64, threads=128):
    # The splits' results of attention_forward(num_splits=...) merged: each weighted by
    # exp(its LSE - the largest), O = their weighted mean and LSE = log of the weights' sum.
    bshd = layout == "bshd"
    q_shape = [batch, seq_q, heads, dim] if bshd else [batch, heads, seq_q, dim]

    @T.prim_func
    def main(O_split: T.Tensor([num_splits] + q_shape, "float32"),
             LSE_split: T.Tensor([num_splits, batch, heads, seq_q], "float32"), O: T.Tensor(q_shape, dtype),
             LSE: T.Tensor([batch, heads, seq_q], "float32")):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            # The rows' weights go through shared memory, so that the merge of O is spread over
            # the threads by columns too, not a row a thread.
            weights = T.alloc_shared([num_splits, block_M], "float32")
            lse_max = T.alloc_fragment([block_M], "float32")
            total = T.alloc_fragment([block_M], "float32")
            lse = T.alloc_fragment([block_M], "float32")
            acc_o = T.alloc_fragment([block_M, dim], "float32")
            rows = bx * block_M
            T.fill(lse_max, -T.infinity("float32"))
            T.fill(total, 0)
            T.fill(acc_o, 0)
            for i in T.Parallel(block_M):
                for s in T.serial(num_splits):
                    lse_max[i] = T.max(lse_max[i], LSE_split[s, bz, by, rows + i])
                # A row no split saw a key of keeps -inf: its weights use 0, never -inf - -inf.
                lse_max[i] = T.if_then_else(lse_max[i] == -T.infinity("float32"), 0, lse_max[i])
                for s in T.serial(num_splits):
                    weights[s, i] = T.exp2((LSE_split[s, bz, by, rows + i] - lse_max[i]) * LOG2E)
                    total[i] += weights[s, i]
                for s in T.serial(num_splits):
                    weights[s, i] = T.if_then_else(total[i] > 0, weights[s, i] / total[i], 0)
                lse[i] = T.if_then_else(total[i] > 0, lse_max[i] + T.log(total[i]), -T.infinity("float32"))
            for i, j in T.Parallel(block_M, dim):
                for s in T.serial(num_splits):
                    if bshd:
                        acc_o[i, j] += weights[s, i] * O_split[s, bz, rows + i, by, j]
                    else:
                        acc_o[i, j] += weights[s, i] * O_split[s, bz, by, rows + i, j]
            if bshd:
                T.copy(acc_o, O[bz, rows:rows + block_M, by, :])
            else:
                T.copy(acc_o, O[bz, by, rows:rows + block_M, :])
            T.copy(lse, LSE[bz, by, rows:rows + block_M])

    return main


@tilec.jit(out_idx=[6, 7], pass_configs=FAST_MATH)
def attention_forward_varlen(heads, heads_kv, dim, causal, sm_scale, dtype="float16", block_M=128, block_N=128,
                             num_stages=2, threads=256):
    # Sequences packed one after another: sequence b's queries are rows cu_seqlens_q[b] ..
    # cu_seqlens_q[b + 1] - 1 of Q [total_q, heads, dim], its keys those of cu_seqlens_k in K
    # and V. A program's rows past its sequence compute masked garbage and are not written;
    # its K and V tiles may reach into the next sequence, whose keys the mask drops. The
    # packing (total_q, total_kv, the offsets' count) and max_seq_q, the longest query
    # sequence, are read at each call: one kernel serves every batch.
    group = heads // heads_kv
    scale = sm_scale * LOG2E
    total_q, total_kv, offsets = T.symbolic("total_q"), T.symbolic("total_kv"), T.symbolic("offsets")

    @T.prim_func
    def main(Q: T.Tensor([total_q, heads, dim], dtype), K: T.Tensor([total_kv, heads_kv, dim], dtype),
             V: T.Tensor([total_kv, heads_kv, dim], dtype), cu_seqlens_q: T.Tensor([offsets], "int32"),
             cu_seqlens_k: T.Tensor([offsets], "int32"), max_seq_q: T.int32, O: T.Tensor([total_q, heads, dim], dtype),
             LSE: T.Tensor([heads, total_q], "float32")):
        with T.Kernel(T.ceildiv(max_seq_q, block_M), heads, offsets - 1, threads=threads) as (bx, by, bz):
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

    return main


@tilec.jit(out_idx=[2])
def attention_backward_preprocess(heads, dim, layout="bshd", dtype="float16", block_M=64, threads=128):
    # Delta[b, h, i] = sum_d O[b, i, h, d] * dO[b, i, h, d]: the row term of dS = P (dP - Delta).
    # The batch and the sequence length are read at each call.
    batch, seq_q = T.symbolic("batch"), T.symbolic("seq_q")
    shape = [batch, seq_q, heads, dim] if layout == "bshd" else [batch, heads, seq_q, dim]

    @T.prim_func
    def main(O: T.Tensor(shape, dtype), dO: T.Tensor(shape, dtype), Delta: T.Tensor([batch, heads, seq_q], "float32")):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            o = T.alloc_fragment([block_M, dim], "float32")
            do = T.alloc_fragment([block_M, dim], "float32")
            delta = T.alloc_fragment([block_M], "float32")
            rows = bx * block_M
            if layout == "bshd":
                T.copy(O[bz, rows:rows + block_M, by, :], o)
                T.copy(dO[bz, rows:rows + block_M, by, :], do)
            else:
                T.copy(O[bz, by, rows:rows + block_M, :], o)
                T.copy(dO[bz, by, rows:rows + block_M, :], do)
            for i, j in T.Parallel(block_M, dim):
                o[i, j] *= do[i, j]
            T.reduce_sum(o, delta, dim=1)
            T.copy(delta, Delta[bz, by, rows:rows + block_M])

    return main


@tilec.jit(out_idx=[7, 8], pass_configs=BACKWARD_PASS_CONFIGS)
def attention_backward(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, sm_scale, layout="bshd",
                       dtype="float16", block_M=64, block_N=64, num_stages=1, threads=128, dq_in_shared=False):
    # A program per block of block_M keys of one K/V head: dK and dV of those keys summed over
    # the heads sharing them and every query block that sees them, with each query block's dQ
    # share added atomically into dQ_acc (float32, zeroed by the caller). Transposed scores:
    # S^T = K Q^T, so the keys are the rows, as dK and dV are. dq_in_shared (Hopper): the share
    # goes through shared memory, which one TMA reduce-add a panel adds to dQ_acc, rather than
    # from registers by an atomic an element.
    group = heads // heads_kv
    past = seq_kv - seq_q
    scale = sm_scale * LOG2E
    bshd = layout == "bshd"
    q_shape = [batch, seq_q, heads, dim] if bshd else [batch, heads, seq_q, dim]
    kv_shape = [batch, seq_kv, heads_kv, dim] if bshd else [batch, heads_kv, seq_kv, dim]

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

    return main


@tilec.jit(out_idx=[10, 11], pass_configs=BACKWARD_PASS_CONFIGS)
def attention_backward_varlen(heads, heads_kv, dim, causal, sm_scale, dtype="float16", block_M=64, block_N=64,
                              num_stages=1, threads=128, dq_in_shared=False):
    # attention_backward over sequences packed as attention_forward_varlen's. A program's keys
    # past its sequence are masked and not written. Its query tiles may reach into the next
    # sequence: the mask drops those rows, so their dQ shares added are exact zeros. The
    # packing and max_seq_kv, the longest key sequence, are read at each call.
    group = heads // heads_kv
    scale = sm_scale * LOG2E
    total_q, total_kv, offsets = T.symbolic("total_q"), T.symbolic("total_kv"), T.symbolic("offsets")

    @T.prim_func
    def main(Q: T.Tensor([total_q, heads, dim], dtype), K: T.Tensor([total_kv, heads_kv, dim], dtype),
             V: T.Tensor([total_kv, heads_kv, dim], dtype), dO: T.Tensor([total_q, heads, dim], dtype),
             LSE: T.Tensor([heads, total_q], "float32"), Delta: T.Tensor([heads, total_q], "float32"),
             cu_seqlens_q: T.Tensor([offsets], "int32"), cu_seqlens_k: T.Tensor([offsets], "int32"),
             max_seq_kv: T.int32, dQ_acc: T.Tensor([total_q, heads, dim], "float32"),
             dK: T.Tensor([total_kv, heads_kv, dim], dtype), dV: T.Tensor([total_kv, heads_kv, dim], dtype)):
        with T.Kernel(T.ceildiv(max_seq_kv, block_M), heads_kv, offsets - 1, threads=threads) as (bx, by, bz):
            (K_shared, V_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t, dscores_t,
             dk, dv, dq) = backward_buffers(block_M, block_N, dim, dtype)
            if dq_in_shared:
                dq_shared = T.alloc_shared([block_N, dim], "float32")
            q_start = cu_seqlens_q[bz]
            q_len = cu_seqlens_q[bz + 1] - q_start
            k_start = cu_seqlens_k[bz]
            k_len = cu_seqlens_k[bz + 1] - k_start
            past = k_len - q_len
            keys = bx * block_M

            T.copy(K[k_start + keys:k_start + keys + block_M, by, :], K_shared)
            T.copy(V[k_start + keys:k_start + keys + block_M, by, :], V_shared)
            T.clear(dk)
            T.clear(dv)
            first = T.max(0, (keys - past) // block_N) if causal else 0
            # A program whose keys all lie past its sequence has no steps.
            q_blocks = T.if_then_else(keys < k_len, T.max(0, T.ceildiv(q_len, block_N) - first), 0)
            steps = group * q_blocks
            for step in T.Pipelined(steps, num_stages=num_stages):
                head, rows = step_head_and_rows(step, by, group, first, q_blocks, block_N)
                T.copy(Q[q_start + rows:q_start + rows + block_N, head, :], Q_shared)
                T.copy(dO[q_start + rows:q_start + rows + block_N, head, :], dO_shared)
                T.copy(LSE[head, q_start + rows:q_start + rows + block_N], lse)
                T.copy(Delta[head, q_start + rows:q_start + rows + block_N], delta)
                backward_scores(K_shared, V_shared, Q_shared, dO_shared, probs_t, dprobs_t)
                if dq_in_shared:  # the step before's share, as attention_backward adds it
                    if step > 0:
                        head_before, rows_before = step_head_and_rows(step - 1, by, group, first, q_blocks, block_N)
                        T.atomic_add(dQ_acc[q_start + rows_before:q_start + rows_before + block_N, head_before, :],
                                     dq_shared)
                backward_step(K_shared, Q_shared, dO_shared, dS_shared, lse, delta, probs_t, probs_t_cast, dprobs_t,
                              dscores_t, dk, dv, dq, keys, rows, past, q_len, k_len, causal, scale, sm_scale, block_M,
                              block_N)
                if dq_in_shared:
                    T.copy(dq, dq_shared)
                else:
                    T.atomic_add(dQ_acc[q_start + rows:q_start + rows + block_N, head, :], dq)
                T.wait_wgmma(0)
            if dq_in_shared:
                if steps > 0:
                    head_last, rows_last = step_head_and_rows(steps - 1, by, group, first, q_blocks, block_N)
                    T.atomic_add(dQ_acc[q_start + rows_last:q_start + rows_last + block_N, head_last, :], dq_shared)
            for i, j in T.Parallel(block_M, dim):
                if keys + i < k_len:
                    dK[k_start + keys + i, by, j] = dk[i, j]
                    dV[k_start + keys + i, by, j] = dv[i, j]

    return main


def _config(tensor, dim, backward=False):
    if not on_gpu(tensor):
        return CPU_CONFIG
    if is_amd(tensor):
        return (AMD_BACKWARD_CONFIGS if backward else AMD_CONFIGS)[dim]
    if backward:
        return (HOPPER_BACKWARD_CONFIGS if is_hopper(tensor) else GPU_BACKWARD_CONFIGS)[dim]
    if not is_hopper(tensor):
        return GPU_CONFIGS[dim]
    return HOPPER_CONFIGS[dim]


def _float32_zeros_like(tensor):
    if hasattr(tensor, "new_zeros"):  # a torch tensor
        import torch  # noqa: PLC0415

        return tensor.new_zeros(tensor.shape, dtype=torch.float32)
    import numpy  # noqa: PLC0415

    return numpy.zeros(tensor.shape, numpy.float32)


def _cast_like(values, tensor):
    return values.to(tensor.dtype) if hasattr(values, "to") else values.astype(tensor.dtype)


def _dims(q, k, v, layout, **others):
    """(batch, heads, heads_kv, seq_q, seq_kv, dim, dtype) of checked q, k, v; `others` are
    more tensors of q's shape and type (the backward pass's out and dout)."""
    if layout not in ("bshd", "bhsd"):
        raise ValueError(f"layout must be 'bshd' or 'bhsd', not {layout!r}")
    shapes = {}
    for name, t in (("q", q), ("k", k), ("v", v), *others.items()):
        shape = tuple(t.shape)
        if len(shape) != 4:
            raise ValueError(f"{name} must have 4 dims ({layout}), not {len(shape)}: {shape}")
        shapes[name] = shape
    if shapes["k"] != shapes["v"]:
        raise ValueError(f"k and v must have one shape, not {shapes['k']} and {shapes['v']}")
    dtype = capture.tensor_dtype_name(q)
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"q must be float16 or bfloat16, not {dtype}")
    for name, t in (("k", k), ("v", v), *others.items()):
        if capture.tensor_dtype_name(t) != dtype:
            raise ValueError(f"{name} must be {dtype} like q, not {capture.tensor_dtype_name(t)}")
    for name in others:
        if shapes[name] != shapes["q"]:
            raise ValueError(f"{name} must have q's shape {shapes['q']}, not {shapes[name]}")
    if layout == "bshd":
        (batch, seq_q, heads, dim), (batch_kv, seq_kv, heads_kv, dim_kv) = shapes["q"], shapes["k"]
    else:
        (batch, heads, seq_q, dim), (batch_kv, heads_kv, seq_kv, dim_kv) = shapes["q"], shapes["k"]
    if batch_kv != batch:
        raise ValueError(f"k has batch {batch_kv} but q has {batch}")
    if dim_kv != dim:
        raise ValueError(f"k has head dim {dim_kv} but q has {dim}")
    if dim not in HEAD_DIMS:
        raise ValueError(f"head dim must be one of {HEAD_DIMS}, not {dim}")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"k's {heads_kv} heads must divide q's {heads} (grouped-query attention)")
    if min(batch, seq_q, seq_kv) < 1:
        raise ValueError(f"batch ({batch}), seq_q ({seq_q}) and seq_kv ({seq_kv}) must be at least 1")
    return batch, heads, heads_kv, seq_q, seq_kv, dim, dtype


def softmax_scale(sm_scale, dim):
    """sm_scale, checked; 1 / sqrt(dim) for None."""
    if sm_scale is None:
        return 1.0 / math.sqrt(dim)
    if isinstance(sm_scale, bool) or not isinstance(sm_scale, (int, float)) or not math.isfinite(sm_scale) \
            or sm_scale <= 0:
        raise ValueError(f"sm_scale must be a positive finite number, not {sm_scale!r}")
    return float(sm_scale)


def _num_splits(q, programs, key_blocks):
    """Split-KV's default: on a GPU whose SMs the programs would leave mostly idle, enough
    splits to fill them, each of at least 4 key blocks; else 1."""
    if not on_gpu(q):
        return 1
    sms = multiprocessors(q)
    if 2 * programs > sms:
        return 1
    return max(1, min(-(-sms // programs), key_blocks // 4, MAX_SPLITS))


def _forward(q, k, v, causal, sm_scale, layout, num_splits=None):
    batch, heads, heads_kv, seq_q, seq_kv, dim, dtype = _dims(q, k, v, layout)
    config = _config(q, dim)
    # Grouped-query attention whose queries would leave a block mostly empty (decoding) packs
    # each K/V head's query heads into the rows of one block.
    group = heads // heads_kv
    packed = group > 1 and seq_q < config["block_M"]
    programs = batch * heads_kv * -(-seq_q * group // config["block_M"]) if packed else \
        batch * heads * -(-seq_q // config["block_M"])
    key_blocks = -(-seq_kv // config["block_N"])
    if num_splits is None:
        num_splits = _num_splits(q, programs, key_blocks)
    elif isinstance(num_splits, bool) or not isinstance(num_splits, int) or not 1 <= num_splits <= MAX_SPLITS:
        raise ValueError(f"num_splits must be an int from 1 to {MAX_SPLITS} (or None: chosen), not {num_splits!r}")
    num_splits = min(num_splits, key_blocks)
    if not packed and num_splits == 1 and is_hopper(q) and dim in HOPPER_OVERLAP_DIMS:
        config = dict(config, overlap=True)
    kernel = for_device_of(q, attention_forward_packed if packed else attention_forward)(
        batch, heads, heads_kv, seq_q, seq_kv, dim, bool(causal), softmax_scale(sm_scale, dim), layout=layout,
        dtype=dtype, num_splits=num_splits, **config)
    if num_splits == 1:
        return kernel(q, k, v)
    combine = for_device_of(q, attention_combine)(num_splits, batch, heads, seq_q, dim, layout=layout, dtype=dtype)
    return combine(*kernel(q, k, v))


def _varlen_dims(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, **others):
    """(batch, heads, heads_kv, total_q, total_kv, dim, dtype, max_seqlen_k) of checked packed q,
    k, v and their offsets; `others` are more tensors of q's shape and type (the backward
    pass's). Offsets on the host are read and checked; offsets on a GPU are not read, which
    would wait for the device (and break graph capture): there max_seqlen_k, when None, is
    total_kv, a bound that costs the backward pass idle programs but no wait."""
    if len(tuple(q.shape)) != 3:
        raise ValueError(f"q must have 3 dims (total_q, heads, dim), not {len(tuple(q.shape))}: {tuple(q.shape)}")
    for name, t in (("k", k), ("v", v)):
        if len(tuple(t.shape)) != 3:
            raise ValueError(f"{name} must have 3 dims (total_kv, heads_kv, dim), not {tuple(t.shape)}")
    unpacked = {name: t[None] for name, t in others.items()}  # [1, total, heads, dim]
    _, heads, heads_kv, total_q, total_kv, dim, dtype = _dims(q[None], k[None], v[None], "bshd", **unpacked)
    for name, cu in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if len(tuple(cu.shape)) != 1 or capture.tensor_dtype_name(cu) != "int32" or cu.shape[0] < 2:
            raise ValueError(f"{name} must be a 1-dim int32 tensor of batch + 1 offsets, not "
                             f"{capture.tensor_dtype_name(cu)} {tuple(cu.shape)}")
    batch = tuple(cu_seqlens_q.shape)[0] - 1
    if tuple(cu_seqlens_k.shape)[0] != batch + 1:
        raise ValueError(f"cu_seqlens_k has {tuple(cu_seqlens_k.shape)[0]} offsets but cu_seqlens_q has {batch + 1}")
    for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if (value is not None or name == "max_seqlen_q") and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive int, not {value!r}")
    if on_gpu(cu_seqlens_q) or on_gpu(cu_seqlens_k):
        return batch, heads, heads_kv, total_q, total_kv, dim, dtype, max_seqlen_k or max(1, total_kv)
    lengths = {}
    for name, cu, total in (("cu_seqlens_q", cu_seqlens_q, total_q), ("cu_seqlens_k", cu_seqlens_k, total_kv)):
        offsets = [int(x) for x in (cu.tolist() if hasattr(cu, "tolist") else cu)]
        if offsets[0] != 0 or any(b < a for a, b in zip(offsets, offsets[1:])) or offsets[-1] > total:
            raise ValueError(f"{name} must start at 0, never decrease and end at most at {total}: {offsets}")
        lengths[name] = max(b - a for a, b in zip(offsets, offsets[1:]))
    for name, value, longest in (("max_seqlen_q", max_seqlen_q, lengths["cu_seqlens_q"]),
                                 ("max_seqlen_k", max_seqlen_k, lengths["cu_seqlens_k"])):
        if value is not None and value < longest:
            raise ValueError(f"{name} must be at least the longest sequence ({longest}), not {value}")
    return batch, heads, heads_kv, total_q, total_kv, dim, dtype, max_seqlen_k or max(1, lengths["cu_seqlens_k"])


@tilec.jit
def fill_rows_past_end(outer, inner, fill, dtype, block_rows=16, threads=128):
    # X [outer, total, inner]: rows r >= CU[-1], which no sequence holds and no attention
    # program writes, get `fill` ("zero" or "-inf"). Blocks of rows before the end do nothing.
    # The row and offset counts are symbolic: one kernel serves every packing.
    total, offsets = T.symbolic("total"), T.symbolic("offsets")

    @T.prim_func
    def main(X: T.Tensor((outer, total, inner), dtype), CU: T.Tensor((offsets,), "int32")):
        with T.Kernel(T.ceildiv(total, block_rows), outer, threads=threads) as (bx, by):
            end = CU[offsets - 1]
            first = bx * block_rows
            if first + block_rows > end:
                for r, i in T.Parallel(block_rows, inner):
                    if first + r >= end and first + r < total:
                        X[by, first + r, i] = T.if_then_else(fill == "zero", T.cast(0, dtype), -T.infinity(dtype))

    return main


def _fill_past_end(x, outer, total, inner, cu_seqlens, fill):
    """Rows of `x` (viewed as [outer, total, inner]) past the last sequence of cu_seqlens get
    `fill`, on the device: the end is not read on the host."""
    for_device_of(x, fill_rows_past_end)(outer, inner, fill, capture.tensor_dtype_name(x))(x.reshape(outer, total, inner), cu_seqlens)


def _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale, max_seqlen_k=None):
    # max_seqlen_k is only checked here (the backward pass uses it)
    _, heads, heads_kv, total_q, total_kv, dim, dtype, _ = _varlen_dims(
        q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    kernel = for_device_of(q, attention_forward_varlen)(heads, heads_kv, dim, bool(causal), softmax_scale(sm_scale, dim), dtype=dtype,
                                      **_config(q, dim))
    out, lse = kernel(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q)
    # Rows after the last sequence belong to none: no keys, so 0 and a log-sum-exp of -inf.
    _fill_past_end(out, 1, total_q, heads * dim, cu_seqlens_q, "zero")
    _fill_past_end(lse, heads, total_q, 1, cu_seqlens_q, "-inf")
    return out, lse


def flash_attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=False, sm_scale=None,
                           return_lse=False, max_seqlen_k=None):
    """flash_attention over a batch of sequences of their own lengths, packed (FlashAttention's
    varlen interface): q [total_q, heads, dim], k and v [total_kv, heads_kv, dim];
    sequence b's queries are q[cu_seqlens_q[b]:cu_seqlens_q[b + 1]] and its keys those of
    cu_seqlens_k (int32, batch + 1 offsets from 0, non-decreasing); max_seqlen_q is the longest
    query sequence (an int), max_seqlen_k the longest key sequence (for the backward pass; see
    flash_attention_varlen_backward). Causal is aligned bottom-right in each sequence. Returns O
    like q, and with return_lse the log-sum-exp [heads, total_q] float32. On torch tensors that
    require grad it is differentiable (flash_attention_varlen_backward).

    Offsets on the host are checked. Offsets on a GPU are not read on the host, so a call never
    waits for the device and captures into a CUDA graph; as in FlashAttention they must then be
    right: wrong ones give wrong rows, never an access outside the tensors."""
    args = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale, max_seqlen_k)
    out, lse = _autograd_varlen_function().apply(*args) if _needs_grad(q, k, v) else _forward_varlen(*args)
    return (out, lse) if return_lse else out


def flash_attention_varlen_backward(q, k, v, out, lse, dout, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal=False,
                                    sm_scale=None, max_seqlen_k=None):
    """(dq, dk, dv) of flash_attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
    max_seqlen_q, causal, sm_scale) = out, whose log-sum-exp is lse (return_lse=True), for the
    output's gradient dout; as flash_attention_backward, packed. Rows of no sequence get 0.
    max_seqlen_k, the longest key sequence, sizes the grid: left out, it is read from host
    offsets, and bounded by total_kv for offsets on a GPU."""
    _, heads, heads_kv, total_q, total_kv, dim, dtype, max_seq_kv = _varlen_dims(
        q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, out=out, dout=dout)
    if tuple(lse.shape) != (heads, total_q) or capture.tensor_dtype_name(lse) != "float32":
        raise ValueError(f"lse must be float32 of shape {(heads, total_q)} (flash_attention_varlen's "
                         f"return_lse), not {capture.tensor_dtype_name(lse)} {tuple(lse.shape)}")
    sm_scale = softmax_scale(sm_scale, dim)
    config = _config(q, dim, backward=True)
    delta = for_device_of(q, attention_backward_preprocess)(heads, dim, layout="bshd", dtype=dtype, block_M=config["block_M"],
                                          threads=config["threads"])(out[None], dout[None])[0]
    dq = _float32_zeros_like(q)
    kernel = for_device_of(q, attention_backward_varlen)(heads, heads_kv, dim, bool(causal), sm_scale, dtype=dtype, **config)
    dk, dv = kernel(q, k, v, dout, lse, delta, cu_seqlens_q, cu_seqlens_k, max_seq_kv, dq)
    for grad in (dk, dv):  # keys of no sequence: no program writes them
        _fill_past_end(grad, 1, total_kv, heads_kv * dim, cu_seqlens_k, "zero")
    return _cast_like(dq, q), dk, dv


def flash_attention_backward(q, k, v, out, lse, dout, causal=False, sm_scale=None, layout="bshd"):
    """(dq, dk, dv) of flash_attention(q, k, v, causal, sm_scale, layout) = out, whose
    log-sum-exp is lse (return_lse=True), for the output's gradient dout. dk and dv are summed
    over the query heads that share each K/V head. Each has its input's shape and type."""
    batch, heads, heads_kv, seq_q, seq_kv, dim, dtype = _dims(q, k, v, layout, out=out, dout=dout)
    if tuple(lse.shape) != (batch, heads, seq_q) or capture.tensor_dtype_name(lse) != "float32":
        raise ValueError(f"lse must be float32 of shape {(batch, heads, seq_q)} (flash_attention's "
                         f"return_lse), not {capture.tensor_dtype_name(lse)} {tuple(lse.shape)}")
    sm_scale = softmax_scale(sm_scale, dim)
    config = _config(q, dim, backward=True)
    delta = for_device_of(q, attention_backward_preprocess)(heads, dim, layout=layout, dtype=dtype, block_M=config["block_M"],
                                          threads=config["threads"])(out, dout)
    dq = _float32_zeros_like(q)
    dk, dv = for_device_of(q, attention_backward)(batch, heads, heads_kv, seq_q, seq_kv, dim, bool(causal), sm_scale, layout=layout,
                                dtype=dtype, **config)(q, k, v, dout, lse, delta, dq)
    return _cast_like(dq, q), dk, dv


@functools.lru_cache(maxsize=None)
def _autograd_function():
    import torch  # noqa: PLC0415

    class FlashAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale, layout, num_splits):
            out, lse = _forward(q, k, v, causal, sm_scale, layout, num_splits)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.options = (causal, sm_scale, layout)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            q, k, v, out, lse = ctx.saved_tensors
            dq, dk, dv = flash_attention_backward(q, k, v, out, lse, dout.contiguous(), *ctx.options)
            return dq, dk, dv, None, None, None, None

    return FlashAttention


@functools.lru_cache(maxsize=None)
def _autograd_varlen_function():
    import torch  # noqa: PLC0415

    class FlashAttentionVarlen(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale, max_seqlen_k):
            out, lse = _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, sm_scale,
                                       max_seqlen_k)
            ctx.save_for_backward(q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k)
            ctx.options = (max_seqlen_q, causal, sm_scale, max_seqlen_k)
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, dout, _dlse):
            q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
            dq, dk, dv = flash_attention_varlen_backward(q, k, v, out, lse, dout.contiguous(), cu_seqlens_q,
                                                         cu_seqlens_k, *ctx.options)
            return dq, dk, dv, None, None, None, None, None, None

    return FlashAttentionVarlen


def _needs_grad(*tensors):
    if not any(getattr(t, "requires_grad", False) for t in tensors):
        return False
    import torch  # noqa: PLC0415

    return torch.is_grad_enabled()


def flash_attention(q, k, v, causal=False, sm_scale=None, layout="bshd", return_lse=False, num_splits=None):
    """softmax(Q K^T * sm_scale) V for 16-bit q, k, v (float16 or bfloat16, one type).

    layout "bshd": q [batch, seq_q, heads, dim], k and v [batch, seq_kv, heads_kv, dim];
    "bhsd": q [batch, heads, seq_q, dim], k and v [batch, heads_kv, seq_kv, dim]. dim is 64,
    128 or 256; heads_kv divides heads (grouped-query and multi-query attention). sm_scale
    defaults to 1 / sqrt(dim). causal aligns the mask bottom-right (FlashAttention's
    convention when seq_q != seq_kv). Returns O in q's layout and type, allocated like q, and
    with return_lse also the log-sum-exp of each row's scaled scores, [batch, heads, seq_q]
    float32 (-inf for a row that sees no key, whose output is 0).

    num_splits > 1 splits the keys into that many runs done at once and merged after (split-KV,
    flash decoding: for few query blocks over many keys); None chooses, splitting only where
    the query blocks alone would leave most of a GPU's SMs idle.

    On torch tensors that require grad it is differentiable: backward runs
    flash_attention_backward's kernels."""
    if _needs_grad(q, k, v):
        out, lse = _autograd_function().apply(q, k, v, causal, sm_scale, layout, num_splits)
    else:
        out, lse = _forward(q, k, v, causal, sm_scale, layout, num_splits)
    return (out, lse) if return_lse else out
