#!func main
#!bind FP8 = "float8_e4m3"
#!bind HISTOGRAM_BINS = 4096
#!bind T = module(tilec.language)
#!bind dim = 32
#!bind heads = 16
#!bind score = func(score)
#!bind FIRST_BITS = 12
#!bind QUERIES = (0, 1)
#!bind block_N = 64
#!bind fill_unscored = func(fill_unscored)
#!bind fill_minus_infinity = func(fill_minus_infinity)
#!bind key_range = func(key_range)
#!bind indexer_buffers = func(indexer_buffers)
#!bind max_len = 0
#!bind num_stages = 1
#!bind order_key = func(order_key)
#!bind queries = 2
#!bind query_logits = func(query_logits)
#!bind score_heads = func(score_heads)
#!bind seq = 37
#!bind seq_kv = 700
#!bind threads = 128
#!bind union_range = func(union_range)
#!bind width = 700
@T.prim_func
def main(Q: T.Tensor((seq, heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
         K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
         KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"),
         Hist: T.Tensor((seq, HISTOGRAM_BINS), "int32"), Logits: T.Tensor((seq, width), "float32")):
    score(Q, K, K_scale, W, KS, KE, Hist, Logits)


@T.macro
def score(Q, K, K_scale, W, KS, KE, Hist, Logits):
    with T.Kernel(T.ceildiv(seq, queries), threads=threads) as program:
        Q_shared, W_shared, K_shared, K_scale_shared, scores, logits = indexer_buffers(block_N, queries, heads,
                                                                                       dim)
        if Hist is not None:
            hist = T.alloc_shared((queries, HISTOGRAM_BINS), "int32")
            T.fill(hist, 0)
        t0 = program * queries
        last = T.min(t0 + queries, seq) - 1
        start, end = union_range(KS, KE, t0, last, queries, seq_kv, max_len)
        for query in QUERIES:
            T.copy(Q[t0 + query, :, :], Q_shared[query * heads:(query + 1) * heads, :])
        T.copy(W[t0:t0 + queries, :], W_shared)
        steps = T.ceildiv(end - start, block_N)
        for n in T.Pipelined(steps, num_stages=num_stages):
            T.copy(K[start + n * block_N, 0], K_shared)
            T.copy(K_scale[start + n * block_N], K_scale_shared)
            score_heads(K_shared, Q_shared, W_shared, scores, heads)
            for query in QUERIES:
                q_start, q_end = key_range(KS, KE, T.min(t0 + query, last), seq_kv, max_len)
                # key s in column s - base
                base = q_start if max_len else 0
                query_logits(scores, K_scale_shared, logits, query, start + n * block_N, q_start, q_end, block_N,
                             heads)
                for i in T.Parallel(block_N):
                    column = start + n * block_N + i - base
                    if (t0 + query <= last) & (column >= 0) & (column < width):
                        Logits[t0 + query, column] = logits[i]
                if Hist is not None:
                    for i in T.Parallel(block_N):
                        if (start + n * block_N + i >= q_start) & (start + n * block_N + i < q_end):
                            T.atomic_add(hist[query, T.Cast("int32", order_key(logits[i]) >> (32 - FIRST_BITS))], 1)
        fill_unscored(Logits, KS, KE, t0, last, start, steps, queries, seq_kv, max_len, block_N)
        if Hist is not None:
            T.copy(hist, Hist[t0:t0 + queries, :])


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


def indexer_buffers(block_N, queries, heads, dim):
    """A program's tiles: its queries' heads (query q's are rows q * heads ..) and their weights,
    a step's block_N keys and their scales, the step's scores [keys, queries * heads] and the
    logits of one query at a time."""
    return (T.alloc_shared((queries * heads, dim), FP8), T.alloc_shared((queries, heads), "float32"),
            T.alloc_shared((block_N, dim), FP8), T.alloc_shared((block_N,), "float32"),
            T.alloc_fragment((block_N, queries * heads), "float32"), T.alloc_fragment((block_N,), "float32"))


@T.macro
def order_key(x):
    # A float32's 32-bit key, ordered as the floats are: the sign bit flipped for positives, every
    # bit for negatives; NaN the largest, -0.0 as +0.0.
    bits = T.reinterpret(x, "uint32")
    return T.if_then_else(x != x, T.uint32(0xFFFFFFFF), T.if_then_else(
        x == 0, T.uint32(0x80000000),
        T.if_then_else(bits >= T.uint32(0x80000000), bits ^ T.uint32(0xFFFFFFFF), bits | T.uint32(0x80000000))))


@T.macro
def query_logits(scores, K_scale_shared, logits, q, first_key, begin, end, block_N, heads):
    # Query q's logits of block_N keys from first_key (the sum of its heads' columns), -inf
    # outside [begin, end).
    T.reduce_sum(scores[:, q * heads:(q + 1) * heads], logits, dim=1)
    for i in T.Parallel(block_N):
        logits[i] = T.if_then_else((first_key + i >= begin) & (first_key + i < end), logits[i] * K_scale_shared[i],
                                   -T.infinity("float32"))


@T.macro
def score_heads(K_shared, Q_shared, W_shared, scores, heads):
    # Every query's heads against the step's keys in one gemm (keys as the rows, so that a
    # query's head sum is a sum along part of each accumulator row), then ReLU times the weights.
    T.gemm(K_shared, Q_shared, scores, transpose_B=True, clear_accum=True)
    for i, c in T.Parallel(scores.shape[0], scores.shape[1]):
        scores[i, c] = T.max(scores[i, c], 0) * W_shared[c // heads, c % heads]


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
