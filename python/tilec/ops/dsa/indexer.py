"""The lightning indexer of DeepSeek Sparse Attention: for each query t and key s in t's range
[ks[t], ke[t]),

    logits[t, s] = k_scale[s] * sum_h w[t, h] * ReLU(q[t, h] . k[s])

with q [S, H, D] and k [S_kv, D] in float8_e4m3 (one key a token, shared by the heads), and
-inf outside the range. Each program takes `queries` neighbouring queries against block_N keys
a step, the keys as the gemm's rows: the head sum is then a sum along each accumulator row. A
step's keys are loaded once for all its queries (the keys' reads from L2 bound one query a
program), over the union of their ranges: causal neighbours' ranges differ by a key or so.
"""

import tilec
import tilec.language as T
from tilec import capture
from tilec.kernel import _allocate as allocate

from ..device import config_for, for_device_of, is_hopper
from .cache_bytes import float32_at
from .topk import FIRST_BITS, HISTOGRAM_BINS, order_key

FP8 = "float8_e4m3"
# Three blocks an SM: ptxas gives the kernel 154 registers a thread where it took 182 (two
# blocks), so one block's head sums run under another's gemm
CONFIG = dict(block_N=128, num_stages=2, threads=128, queries=2, blocks_per_sm=3)
# On Hopper the keys come by TMA, three stages ahead: thread 0 issues each stage's two boxes
# where every thread issued 9 cp.async copies and their addresses (about 60 instructions of a
# step's 560): 897-915 TFLOP/s against 802-806 at S = 4096 (H100, bench/RESULTS.md 2026-12-06)
HOPPER_CONFIG = dict(CONFIG, num_stages=3, tma=True)
CPU_CONFIG = dict(block_N=64, num_stages=1, threads=128, queries=2)
AMD_CONFIG = dict(block_N=64, num_stages=1, threads=128, queries=1)  # 64 KiB of LDS a block


def scale_row(block_N):
    """The scales a TMA stage loads for block_N keys: from the 16-byte boundary at or below the
    first key's (a box can't start elsewhere), so 3 more, in whole 128-byte lines."""
    return ((block_N + 3) * 4 + 127) // 128 * 32


def indexer_buffers(block_N, queries, heads, dim, stages=1, scales=None, weights=True):
    """A program's tiles: its queries' heads (query q's are rows q * heads ..) and their weights
    (None without `weights`), `stages` steps' block_N keys and `scales` (block_N) of their scales
    (one row a stage, a tile TMA moves), a step's scores [keys, queries * heads] and the logits of
    one query at a time."""
    return (T.alloc_shared((queries * heads, dim), FP8),
            T.alloc_shared((queries, heads), "float32") if weights else None,
            T.alloc_shared((stages, block_N, dim), FP8), T.alloc_shared((stages, 1, scales or block_N), "float32"),
            T.alloc_fragment((block_N, queries * heads), "float32"), T.alloc_fragment((block_N,), "float32"))


@T.macro
def query_logits(scores, W_shared, K_scale_shared, stage, skip, logits, q, first_key, begin, end, block_N, heads):
    # Query q's logits of block_N keys from first_key (their scales K_scale_shared[stage, 0, skip:]):
    # the sum over its heads' columns of ReLU times the head's weight, -inf outside [begin, end). The
    # products are made here, beside their sum: nvcc fuses a product and its sum into an FMA only
    # within one basic block, and the previous query's stores (a branch) ended the gemm's block.
    for i, c in T.Parallel(scores.shape[0], scores.shape[1]):
        if c // heads == q:
            scores[i, c] = T.max(scores[i, c], 0) * W_shared[q, c % heads]
    T.reduce_sum(scores[:, q * heads:(q + 1) * heads], logits, dim=1)
    masked_and_scaled(logits, K_scale_shared, stage, skip, first_key, begin, end, block_N)


@T.macro
def masked_and_scaled(logits, K_scale_shared, stage, skip, first_key, begin, end, block_N):
    # block_N keys' head sums from first_key times their scales (K_scale_shared[stage, 0, skip:]),
    # -inf outside [begin, end)
    for i in T.Parallel(block_N):
        logits[i] = T.if_then_else((first_key + i >= begin) & (first_key + i < end),
                                   logits[i] * K_scale_shared[stage, 0, skip + i], -T.infinity("float32"))


@T.macro
def split_weights(W, W_split, t0, seq, queries, heads):
    # W_split [8, queries * heads] bfloat16, the B of the head sums' gemm: row 2q holds query q's
    # weights rounded to bfloat16 in its heads' columns, row 2q + 1 what that rounding left (so
    # their sum is the weight to 2^-16), every other element 0.
    for n, c in T.Parallel(W_split.shape[0], W_split.shape[1]):
        w = W[T.min(t0 + c // heads, seq - 1), c % heads]
        high = T.Cast("float32", T.Cast("bfloat16", w))
        W_split[n, c] = T.if_then_else(n // 2 == c // heads, T.if_then_else(n % 2 == 0, high, w - high), 0)


@T.macro
def head_sums_on_tensor_cores(scores, relu, W_split, sums):
    # Every query's head sums of a step at once, as a gemm from registers: ReLU(scores) rounded to
    # bfloat16 (a ReLU that keeps NaN, as torch's: one conversion of a pair of scores that clamps
    # negatives) against W_split, so that query q's logits are sums[:, 2q] + sums[:, 2q + 1]. The
    # CUDA cores' way takes a max and an FMA a score; this one rounds each score to 8 bits, an
    # error of at most 2^-9 of each term.
    for i, c in T.Parallel(scores.shape[0], scores.shape[1]):
        relu[i, c] = T.if_then_else(scores[i, c] < 0, 0, scores[i, c])
    T.gemm(relu, W_split, sums, transpose_B=True, clear_accum=True)


@T.macro
def load_keys(K, K_scale, K_shared, K_scale_shared, k_ready, start, m, block_N, stages, cluster_mask=None):
    # Step m's keys and their scales into stage m % stages by TMA (rows past the keys read as
    # zeros), k_ready[m % stages]'s phase completing when they have landed. The scales from the
    # 16-byte boundary at or below the first key's: key start + m * block_N + i's scale is at
    # start % 4 + i. With cluster_mask, multicast to the cluster's blocks it names.
    stage = m % stages
    scales = K_scale_shared.shape[2]
    first = start // 4 * 4 + m * block_N
    T.tma_copy(K[start + m * block_N:start + (m + 1) * block_N, :], K_shared[stage, :, :], barrier=k_ready[stage],
               cluster_mask=cluster_mask)
    T.tma_copy(K_scale[first:first + scales], K_scale_shared[stage, :, :], barrier=k_ready[stage],
               cluster_mask=cluster_mask)
    T.barrier_arrive(k_ready[stage])


@T.macro
def fill_minus_infinity(Logits, row, begin, end, block_N):
    # Logits[row, begin:end] = -inf
    for n in T.serial(T.ceildiv(T.max(end - begin, 0), block_N)):
        for i in T.Parallel(block_N):
            if begin + n * block_N + i < end:
                Logits[row, begin + n * block_N + i] = -T.infinity("float32")


@T.macro
def fill_unscored(Logits, KS, KE, t0, seq, start, steps, queries, seq_kv, max_len, block_N):
    # -inf in every column of queries t0.. that no step of block_N keys from `start` writes:
    # before the union's first key and past its last step
    width = Logits.shape[1]
    for q in T.unroll(queries):
        if t0 + q < seq:
            q_start, q_end = key_range(KS, KE, t0 + q, seq_kv, max_len)
            base = q_start if max_len else 0
            fill_minus_infinity(Logits, t0 + q, 0, T.min(start - base, width), block_N)
            fill_minus_infinity(Logits, t0 + q, T.max(start - base + steps * block_N, 0), width, block_N)


@T.macro
def key_range(KS, KE, t, seq_kv, max_len):
    # Query t's keys [start, end): its range cut to [0, seq_kv) (and to max_len keys)
    start = T.min(T.max(KS[t], 0), seq_kv)
    end = T.max(T.min(KE[t], seq_kv, start + max_len) if max_len else T.min(KE[t], seq_kv), start)
    return start, end


@T.macro
def heaviest_first(program, seq, queries, cluster=1):
    # The first query of `program`, the programs in reverse: under causal ranges later queries
    # have more keys, and the GPU starts programs about in order, so the longest start first and
    # the shortest fill in at the end (in order, the last wave was the longest programs alone).
    # The max says to guard_global_accesses what the grid does, that the query is >= 0. In
    # clusters of `cluster` programs (the grid ceildiv(seq, queries * cluster) of them), the
    # clusters in reverse and a cluster's programs on neighbouring queries.
    if cluster == 1:
        return T.max(T.ceildiv(seq, queries) - 1 - program, 0) * queries
    return (T.max(T.ceildiv(seq, queries * cluster) - 1 - program // cluster, 0) * cluster + program % cluster) * queries


@T.macro
def union_range(KS, KE, t0, seq, queries, seq_kv, max_len):
    # The union [start, end) of queries t0..'s key ranges (a query past the end is the last
    # again), bound once: what reads it (the pipelined copies) takes its values.
    lo = T.alloc_var("int32", seq_kv)
    hi = T.alloc_var("int32", 0)
    for q in T.unroll(queries):
        q_start, q_end = key_range(KS, KE, T.min(t0 + q, seq - 1), seq_kv, max_len)
        lo = T.min(lo, q_start)
        hi = T.max(hi, q_end)
    start = lo + 0
    return start, T.max(hi, start)


@tilec.jit(out_idx=[-1])
def indexer_logits_kernel(heads, dim, max_len=0, block_N=128, num_stages=2, threads=128, queries=1, histogram=False,
                          blocks_per_sm=0, tma=False, tensor_head_sum=False, multicast=False, overlap=False,
                          arrive_free=False):
    # max_len 0: logits [seq, seq_kv], key s in column s. max_len > 0 (the compressed form):
    # logits [seq, max_len], key ks[t] + c in column c, the range cut to its first max_len keys.
    # histogram: the kernel also writes Hist [seq, HISTOGRAM_BINS] (an input, each element
    # written): row t counts t's keys in its range by their logits' top 12 bits as top-k orders
    # them, top-k's first round (topk_kernel(..., histogram=True) then reads the logits once).
    # blocks_per_sm: T.annotate_min_blocks_per_sm's n, or 0 to leave ptxas free. tma: the keys
    # and their scales by TMA on mbarriers (Hopper, and the CPU) instead of T.Pipelined's copies.
    # tensor_head_sum: the head sums as a bfloat16 gemm (head_sums_on_tensor_cores; up to 4 queries).
    # multicast (with tma): programs in clusters of two on neighbouring queries, over the union
    # of both's ranges, each stage's keys loaded once for both by TMA multicast (from L2 once
    # where each program read them).
    # overlap (with tma, without multicast or tensor_head_sum): step n + 1's gemm runs under step
    # n's head sums, in a second accumulator. arrive_free (with tma, without multicast or
    # overlap): each thread arrives at its stage's k_free mbarrier when done with it, where a block
    # barrier ended each step; thread 0 waits for it before reloading the stage.
    if multicast and not tma:
        raise ValueError("multicast=True shares the keys' TMA loads between a cluster's programs: it needs tma=True")
    if arrive_free and (not tma or multicast or overlap):
        raise ValueError("arrive_free=True frees each TMA stage by an mbarrier: it needs tma=True, and neither "
                         "multicast nor overlap")
    if overlap and (not tma or multicast or tensor_head_sum or num_stages < 3):
        raise ValueError("overlap=True issues a step's gemm before the last step's head sums: it needs tma=True, 3 or "
                         "more stages, and neither multicast nor tensor_head_sum")
    if tensor_head_sum and queries > 4:
        raise ValueError(f"tensor_head_sum takes up to 4 queries a program (two columns each of the gemm's 8), "
                         f"not {queries}")
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")  # one kernel for every length
    width = max_len if max_len else seq_kv
    QUERIES = tuple(range(queries))  # a compile-time loop: each query's columns are constants
    cluster = 2 if multicast else 1

    @T.macro
    def score(Q, K, K_scale, W, KS, KE, Hist, Logits):
        with T.Kernel(T.ceildiv(seq, queries * cluster) * cluster, threads=threads, cluster_dims=cluster) as program:
            if blocks_per_sm:
                T.annotate_min_blocks_per_sm(blocks_per_sm)
            Q_shared, W_shared, K_shared, K_scale_shared, scores, logits = indexer_buffers(
                block_N, queries, heads, dim, num_stages if tma else 1, scale_row(block_N) if tma else None,
                weights=not tensor_head_sum)
            if multicast:
                # k_free[s] (rank 0's): both programs are done with stage s
                k_ready = T.alloc_cluster_barrier([threads] * num_stages)
                k_free = T.alloc_cluster_barrier([cluster] * num_stages)
            elif tma:
                k_ready = T.alloc_barrier([threads] * num_stages)
                if arrive_free:
                    k_free = T.alloc_barrier([threads] * num_stages)
            if Hist is not None:
                hist = T.alloc_shared((queries, HISTOGRAM_BINS), "int32")
                T.fill(hist, 0)
            t0 = heaviest_first(program, seq, queries, cluster)
            rank = program % cluster
            # Queries are tested against seq itself, not a let of the block's last query:
            # guard_global_accesses then proves the KS and KE rows and the stored rows inside
            # and adds no tests of its own (2% on the H100, bench/RESULTS.md 2026-12-06).
            start, end = union_range(KS, KE, t0 - rank * queries, seq, queries * cluster, seq_kv, max_len)
            # Each query's key range, read once: read in each step, the guarded loads of KS and
            # KE split the step's ReLU-times-weight products from their head sums, and nvcc
            # stopped fusing them into FMAs (other logits, by up to 1e-4, than with the lengths
            # as constants; the same logits again now, on the H100)
            ranges = T.alloc_local((queries, 2), "int32")
            for query in QUERIES:
                ranges[query, 0], ranges[query, 1] = key_range(KS, KE, T.min(t0 + query, seq - 1), seq_kv, max_len)
            for query in QUERIES:
                T.copy(Q[t0 + query, :, :], Q_shared[query * heads:(query + 1) * heads, :])
            if tensor_head_sum:
                W_split = T.alloc_shared((8, queries * heads), "bfloat16")
                relu = T.alloc_fragment((block_N, queries * heads), "bfloat16")
                sums = T.alloc_fragment((block_N, 8), "float32")
                split_weights(W, W_split, t0, seq, queries, heads)
            else:
                T.copy(W[t0:t0 + queries, :], W_shared)
            def score_gemm(K_shared, stage, scores, wg_wait=0):
                # Every query's heads against the step's keys in one gemm (keys as the rows, so that a
                # query's head sum is a sum along part of each accumulator row)
                T.gemm(K_shared[stage, :, :], Q_shared, scores, transpose_B=True, clear_accum=True, wg_wait=wg_wait)

            def step_logits(scores, K_scale_shared, stage, skip, n):
                # Each query's logits of step n's scores
                if tensor_head_sum:
                    head_sums_on_tensor_cores(scores, relu, W_split, sums)
                for query in QUERIES:
                    q_start, q_end = ranges[query, 0], ranges[query, 1]
                    # key s in column s - base
                    base = q_start if max_len else 0
                    if tensor_head_sum:
                        T.reduce_sum(sums[:, 2 * query:2 * query + 2], logits, dim=1)
                        masked_and_scaled(logits, K_scale_shared, stage, skip, start + n * block_N, q_start, q_end,
                                          block_N)
                    else:
                        query_logits(scores, W_shared, K_scale_shared, stage, skip, logits, query, start + n * block_N,
                                     q_start, q_end, block_N, heads)
                    for i in T.Parallel(block_N):
                        column = start + n * block_N + i - base
                        if (t0 + query < seq) & (column >= 0) & (column < width):
                            Logits[t0 + query, column] = logits[i]
                    if Hist is not None:
                        for i in T.Parallel(block_N):
                            if (start + n * block_N + i >= q_start) & (start + n * block_N + i < q_end):
                                key_bin = T.Cast("int32", order_key(logits[i]) >> (32 - FIRST_BITS))
                                T.atomic_add(hist[query, key_bin], 1)

            def score_step(K_shared, K_scale_shared, stage, skip, n):
                score_gemm(K_shared, stage, scores)
                step_logits(scores, K_scale_shared, stage, skip, n)

            steps = T.ceildiv(end - start, block_N)
            if overlap:
                # Step n + 1's gemm is issued before step n's head sums, into the other of two
                # accumulators, so the tensor cores run it while the CUDA cores sum. Steps that
                # have a successor go in pairs (each half its accumulator), then the odd one,
                # then the last: no branch between a gemm and its wait.
                pair = (scores, T.alloc_fragment((block_N, queries * heads), "float32"))

                def next_gemm_then_logits(n, half):
                    # stage (n + num_stages - 1) % num_stages held step n - 1's keys, done
                    # with at its barrier
                    if n + num_stages - 1 < steps:
                        load_keys(K, K_scale, K_shared, K_scale_shared, k_ready, start, n + num_stages - 1, block_N,
                                  num_stages)
                    T.barrier_wait(k_ready[(n + 1) % num_stages], ((n + 1) // num_stages) & 1)
                    score_gemm(K_shared, (n + 1) % num_stages, pair[1 - half], wg_wait=-1)
                    T.wait_wgmma(1)
                    step_logits(pair[half], K_scale_shared, n % num_stages, start % 4, n)
                    T.sync_threads()

                def last_logits(half):
                    T.wait_wgmma(0)
                    step_logits(pair[half], K_scale_shared, (steps - 1) % num_stages, start % 4, steps - 1)

                for m in T.unroll(num_stages - 1):
                    if m < steps:
                        load_keys(K, K_scale, K_shared, K_scale_shared, k_ready, start, m, block_N, num_stages)
                if steps > 0:
                    T.barrier_wait(k_ready[0], 0)
                    score_gemm(K_shared, 0, pair[0], wg_wait=-1)
                    for r in T.serial((steps - 1) // 2):
                        for half in (0, 1):  # a compile-time loop: each half its accumulator
                            next_gemm_then_logits(2 * r + half, half)
                    if (steps - 1) % 2 == 1:
                        next_gemm_then_logits(steps - 2, 0)
                        last_logits(1)
                    else:
                        last_logits(0)
            elif tma:
                # Each stage's keys and scales by TMA, issued by thread 0 num_stages - 1 steps
                # ahead into the stage the last step read (every thread was done with it at
                # that step's closing barrier; in a cluster, rank 0's thread 0 multicasts once
                # both programs have arrived at its k_free); k_ready[s] completes when they
                # have landed.
                mask = 0b11 if multicast else None
                for m in T.unroll(num_stages - 1):
                    if m < steps:
                        load_keys(K, K_scale, K_shared, K_scale_shared, k_ready, start, m, block_N, num_stages, mask)
                for n in T.serial(steps):
                    if n + num_stages - 1 < steps:
                        if multicast:
                            if (rank == 0) & (n > 0):
                                T.mbarrier_wait_parity(k_free[(n - 1) % num_stages], ((n - 1) // num_stages) & 1)
                        elif arrive_free:
                            if (T.get_thread_binding() == 0) & (n > 0):
                                T.mbarrier_wait_parity(k_free[(n - 1) % num_stages], ((n - 1) // num_stages) & 1)
                        load_keys(K, K_scale, K_shared, K_scale_shared, k_ready, start, n + num_stages - 1, block_N,
                                  num_stages, mask)
                    T.barrier_wait(k_ready[n % num_stages], (n // num_stages) & 1)
                    score_step(K_shared, K_scale_shared, n % num_stages, start % 4, n)
                    if arrive_free:
                        T.barrier_arrive(k_free[n % num_stages])
                    else:
                        T.sync_threads()
                    if multicast:
                        if T.get_thread_binding() == 0:
                            T.mbarrier_arrive(k_free[n % num_stages], cta_id=0)
            else:
                for n in T.Pipelined(steps, num_stages=num_stages):
                    T.copy(K[start + n * block_N, 0], K_shared[0, :, :])
                    T.copy(K_scale[start + n * block_N], K_scale_shared[0, 0, :])
                    score_step(K_shared, K_scale_shared, 0, 0, n)
            fill_unscored(Logits, KS, KE, t0, seq, start, steps, queries, seq_kv, max_len, block_N)
            if Hist is not None:
                T.copy(hist, Hist[t0:t0 + queries, :])

    if histogram:
        @T.prim_func
        def main(Q: T.Tensor((seq, heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
                 K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
                 KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"),
                 Hist: T.Tensor((seq, HISTOGRAM_BINS), "int32"), Logits: T.Tensor((seq, width), "float32")):
            score(Q, K, K_scale, W, KS, KE, Hist, Logits)

        return main

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
             K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
             KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"), Logits: T.Tensor((seq, width), "float32")):
        score(Q, K, K_scale, W, KS, KE, None, Logits)

    return main


# The paged indexer cache of DSA's decode: pages of PAGE_SIZE tokens, a page's bytes its tokens'
# dim float8_e4m3 values (token by token), then their float32 scales.
PAGE_SIZE = 64


@tilec.jit(out_idx=[-1])
def indexer_decode_kernel(next_n, heads, dim, threads=128):
    # Logits [batch * next_n, max_pages * PAGE_SIZE]: query j of sequence b sees its context's
    # tokens s <= context_len - next_n + j, token s on page block_table[b, s // PAGE_SIZE].
    # The batch, the cache's pages and the block table's width are read at each call.
    batch, pages, max_pages = T.symbolic("batch"), T.symbolic("pages"), T.symbolic("max_pages")
    page_bytes = PAGE_SIZE * (dim + 4)
    width = max_pages * PAGE_SIZE

    @T.prim_func
    def main(Q: T.Tensor((batch * next_n, heads, dim), FP8), Cache: T.Tensor((pages, page_bytes), "uint8"),
             W: T.Tensor((batch * next_n, heads), "float32"), BlockTable: T.Tensor((batch, max_pages), "int32"),
             ContextLens: T.Tensor((batch,), "int32"), Logits: T.Tensor((batch * next_n, width), "float32")):
        with T.Kernel(batch * next_n, threads=threads) as row:
            Q_shared, W_shared, K_shared, K_scale_shared, scores, logits = indexer_buffers(PAGE_SIZE, 1, heads, dim)
            b = row // next_n
            end = T.max(T.min(ContextLens[b] - next_n + row % next_n + 1, width), 0)
            T.copy(Q[row, :, :], Q_shared)
            T.copy(W[row:row + 1, :], W_shared)
            for p in T.serial(T.ceildiv(end, PAGE_SIZE)):
                page = BlockTable[b, p]
                # a page id outside the cache reads page 0, and its keys are masked
                readable = (page >= 0) & (page < pages)
                at = T.if_then_else(readable, page, 0)
                for i, d in T.Parallel(PAGE_SIZE, dim):
                    K_shared[0, i, d] = T.reinterpret(Cache[at, i * dim + d], FP8)
                for i in T.Parallel(PAGE_SIZE):
                    K_scale_shared[0, 0, i] = float32_at(Cache, at, PAGE_SIZE * dim + 4 * i)
                T.gemm(K_shared[0, :, :], Q_shared, scores, transpose_B=True, clear_accum=True)
                query_logits(scores, W_shared, K_scale_shared, 0, 0, logits, 0, p * PAGE_SIZE, 0,
                             T.if_then_else(readable, end, 0), PAGE_SIZE, heads)
                T.copy(logits, Logits[row, p * PAGE_SIZE])
            fill_minus_infinity(Logits, row, T.ceildiv(end, PAGE_SIZE) * PAGE_SIZE, width, PAGE_SIZE)

    return main


def _shape(x, name, dims):
    shape = tuple(x.shape)
    if len(shape) != dims:
        raise ValueError(f"{name} must have {dims} dims, not {len(shape)}: {shape}")
    return shape


def _dtype(x):
    """x's element type by tilec's name (float8_e4m3 for ml_dtypes' and torch's float8_e4m3fn)."""
    return str(T.dtype(capture.tensor_dtype_name(x)))


def _typed(x, name, dtype, shape):
    actual = _dtype(x)
    if actual != dtype or tuple(x.shape) != shape:
        raise ValueError(f"{name} must be {dtype} of shape {shape}, not {actual} of shape {tuple(x.shape)}")


def indexer_logits(q, k, k_scale, weights, ks, ke, max_len=None, histogram=False):
    """The lightning indexer's logits: for query t and key s with ks[t] <= s < ke[t],
    k_scale[s] * sum_h weights[t, h] * ReLU(q[t, h] . k[s]); -inf elsewhere.

    q [S, H, D] and k [S_kv, D] float8_e4m3; k_scale [S_kv], weights [S, H] float32 (the caller
    folds q's scales and any constant factor into weights); ks, ke [S] int32 (causal prefill:
    ks = 0, ke = t + 1; a range reaching outside [0, S_kv) is cut to it). Returns float32 logits
    [S, S_kv]; with max_len, the compressed form [S, max_len], where column c holds key
    ks[t] + c (keys from ks[t] + max_len on are left out, and columns past ke[t] are -inf).

    With histogram=True it returns (logits, hist): hist [S, 4096] int32 counts each query's keys
    in its range by the top 12 bits of their logits as top-k orders them, which
    topk_indices(logits, k, ks, ke, histogram=hist) takes in place of its first pass over the
    logits (with the full form and the same ks, ke)."""
    S, H, D = _shape(q, "q", 3)
    S_kv, D_k = _shape(k, "k", 2)
    for name, x in (("q", q), ("k", k)):
        if _dtype(x) != FP8:
            raise ValueError(f"{name} must be {FP8}, not {_dtype(x)}")
    if D_k != D:
        raise ValueError(f"k has head dim {D_k} but q has {D}")
    if D % 32 or H % 16:
        raise ValueError(f"the head dim must be a multiple of 32 and the heads of 16, not D = {D}, H = {H}")
    _typed(k_scale, "k_scale", "float32", (S_kv,))
    _typed(weights, "weights", "float32", (S, H))
    _typed(ks, "ks", "int32", (S,))
    _typed(ke, "ke", "int32", (S,))
    if max_len is not None and (isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1):
        raise ValueError(f"max_len must be a positive int or None, not {max_len!r}")
    if not isinstance(histogram, bool):
        raise ValueError(f"histogram must be True or False, not {histogram!r}")
    config = config_for(q, gpu=HOPPER_CONFIG if is_hopper(q) else CONFIG, amd=AMD_CONFIG, cpu=CPU_CONFIG)
    kernel = for_device_of(q, indexer_logits_kernel)(H, D, max_len=max_len or 0, histogram=histogram, **config)
    if not histogram:
        return kernel(q, k, k_scale, weights, ks, ke)
    hist = allocate((S, HISTOGRAM_BINS), "int32", q, None)
    return kernel(q, k, k_scale, weights, ks, ke, hist), hist


def indexer_decode_logits(q, kv_cache, weights, block_table, context_lens):
    """The lightning indexer's logits for decoding over a paged key cache (DeepGEMM's paged MQA
    logits): float32 [B * next_n, max_pages * 64], row b * next_n + j for query j of sequence b,
    column s for its context's token s; -inf where s > context_lens[b] - next_n + j.

    q [B, next_n, H, D] float8_e4m3; weights [B * next_n, H] float32. kv_cache: pages of 64
    tokens, [num_pages, 64, 1, D + 4] or [num_pages, 64 * (D + 4)] uint8, a page's bytes its 64
    keys' D float8_e4m3 values, key by key, then their 64 float32 scales. block_table
    [B, max_pages] int32: sequence b's page p; a page id outside the cache masks its keys.
    context_lens [B] int32."""
    B, next_n, H, D = _shape(q, "q", 4)
    if _dtype(q) != FP8:
        raise ValueError(f"q must be {FP8}, not {_dtype(q)}")
    if D % 32 or H % 16:
        raise ValueError(f"the head dim must be a multiple of 32 and the heads of 16, not D = {D}, H = {H}")
    page_bytes = PAGE_SIZE * (D + 4)
    cache_shape = tuple(kv_cache.shape)
    if _dtype(kv_cache) != "uint8" or not cache_shape or _product(cache_shape[1:]) != page_bytes:
        raise ValueError(f"kv_cache must be uint8 pages of {page_bytes} bytes ({PAGE_SIZE} keys of {D} float8 "
                         f"values and a float32 scale), [num_pages, {PAGE_SIZE}, 1, {D + 4}], not "
                         f"{_dtype(kv_cache)} of shape {cache_shape}")
    _typed(weights, "weights", "float32", (B * next_n, H))
    if len(tuple(block_table.shape)) != 2 or tuple(block_table.shape)[0] != B or _dtype(block_table) != "int32":
        raise ValueError(f"block_table must be int32 [{B}, max_pages], not {_dtype(block_table)} of shape "
                         f"{tuple(block_table.shape)}")
    _typed(context_lens, "context_lens", "int32", (B,))
    kernel = for_device_of(q, indexer_decode_kernel)(next_n, H, D)
    return kernel(q.reshape(B * next_n, H, D), kv_cache.reshape(cache_shape[0], page_bytes), weights, block_table,
                  context_lens)


def _product(dims):
    result = 1
    for d in dims:
        result *= d
    return result
