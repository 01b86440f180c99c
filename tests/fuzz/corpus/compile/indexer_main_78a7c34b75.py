#!target cuda sm_90a
#!func main
#!bind FP8 = "float8_e4m3"
#!bind PAGE_SIZE = 64
#!bind T = module(tilec.language)
#!bind batch = 128
#!bind dim = 128
#!bind fill_minus_infinity = func(fill_minus_infinity)
#!bind float32_at = func(float32_at)
#!bind heads = 64
#!bind indexer_buffers = func(indexer_buffers)
#!bind max_pages = 2048
#!bind next_n = 2
#!bind page_bytes = 8448
#!bind pages = 8192
#!bind query_logits = func(query_logits)
#!bind score_heads = func(score_heads)
#!bind threads = 128
#!bind width = 131072
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
                K_shared[i, d] = T.reinterpret(Cache[at, i * dim + d], FP8)
            for i in T.Parallel(PAGE_SIZE):
                K_scale_shared[i] = float32_at(Cache, at, PAGE_SIZE * dim + 4 * i)
            score_heads(K_shared, Q_shared, W_shared, scores, heads)
            query_logits(scores, K_scale_shared, logits, 0, p * PAGE_SIZE, 0, T.if_then_else(readable, end, 0),
                         PAGE_SIZE, heads)
            T.copy(logits, Logits[row, p * PAGE_SIZE])
        fill_minus_infinity(Logits, row, T.ceildiv(end, PAGE_SIZE) * PAGE_SIZE, width, PAGE_SIZE)


@T.macro
def fill_minus_infinity(Logits, row, begin, end, block_N):
    # Logits[row, begin:end] = -inf
    for n in T.serial(T.ceildiv(T.max(end - begin, 0), block_N)):
        for i in T.Parallel(block_N):
            if begin + n * block_N + i < end:
                Logits[row, begin + n * block_N + i] = -T.infinity("float32")


@T.macro
def float32_at(Cache, row, at):
    # The float32 whose 4 bytes start at Cache[row, at].
    bits = (T.Cast("uint32", Cache[row, at]) | (T.Cast("uint32", Cache[row, at + 1]) << 8)
            | (T.Cast("uint32", Cache[row, at + 2]) << 16) | (T.Cast("uint32", Cache[row, at + 3]) << 24))
    return T.reinterpret(bits, "float32")


def indexer_buffers(block_N, queries, heads, dim):
    """A program's tiles: its queries' heads (query q's are rows q * heads ..) and their weights,
    a step's block_N keys and their scales, the step's scores [keys, queries * heads] and the
    logits of one query at a time."""
    return (T.alloc_shared((queries * heads, dim), FP8), T.alloc_shared((queries, heads), "float32"),
            T.alloc_shared((block_N, dim), FP8), T.alloc_shared((block_N,), "float32"),
            T.alloc_fragment((block_N, queries * heads), "float32"), T.alloc_fragment((block_N,), "float32"))


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
