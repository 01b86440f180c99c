#!func main
#!bind FP8 = "float8_e4m3"
#!bind T = module(tilec.language)
#!bind block_N = 64
#!bind dim = 32
#!bind fill_minus_infinity = func(fill_minus_infinity)
#!bind heads = 16
#!bind indexer_buffers = func(indexer_buffers)
#!bind max_len = 0
#!bind num_stages = 1
#!bind score_keys = func(score_keys)
#!bind seq = 1
#!bind seq_kv = 62
#!bind threads = 128
#!bind width = 62
@T.prim_func
def main(Q: T.Tensor((seq * heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
         K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
         KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"),
         Logits: T.Tensor((seq, width), "float32")):
    with T.Kernel(seq, threads=threads) as t:
        Q_shared, W_shared, K_shared, K_scale_shared, scores, logits = indexer_buffers(block_N, heads, dim)
        start = T.min(T.max(KS[t], 0), seq_kv)
        end = T.max(T.min(KE[t], seq_kv, start + max_len) if max_len else T.min(KE[t], seq_kv), start)
        # the column of the range's first key
        first_column = 0 if max_len else start
        T.copy(Q[t * heads, 0], Q_shared)
        T.copy(W[t, 0], W_shared)
        for n in T.Pipelined(T.ceildiv(end - start, block_N), num_stages=num_stages):
            T.copy(K[start + n * block_N, 0], K_shared)
            T.copy(K_scale[start + n * block_N], K_scale_shared)
            score_keys(K_shared, Q_shared, W_shared, K_scale_shared, scores, logits, start + n * block_N, end,
                       block_N, heads)
            T.copy(logits, Logits[t, first_column + n * block_N])
        # -inf in every column no step wrote: before the range (full form) and after it
        fill_minus_infinity(Logits, t, 0, first_column, block_N)
        fill_minus_infinity(Logits, t, first_column + T.ceildiv(end - start, block_N) * block_N, width, block_N)


@T.macro
def fill_minus_infinity(Logits, row, begin, end, block_N):
    # Logits[row, begin:end] = -inf
    for n in T.serial(T.ceildiv(T.max(end - begin, 0), block_N)):
        for i in T.Parallel(block_N):
            if begin + n * block_N + i < end:
                Logits[row, begin + n * block_N + i] = -T.infinity("float32")


def indexer_buffers(block_N, heads, dim):
    """A program's tiles: its query's heads and their weights, a step's block_N keys and their
    scales, the step's scores [keys, heads] and logits."""
    return (T.alloc_shared((heads, dim), FP8), T.alloc_shared((heads,), "float32"),
            T.alloc_shared((block_N, dim), FP8), T.alloc_shared((block_N,), "float32"),
            T.alloc_fragment((block_N, heads), "float32"), T.alloc_fragment((block_N,), "float32"))


@T.macro
def score_keys(K_shared, Q_shared, W_shared, K_scale_shared, scores, logits, first_key, end, block_N, heads):
    # The logits of block_N keys from first_key (keys as the gemm's rows, so that the head sum
    # is a sum along each accumulator row), -inf from `end` on.
    T.gemm(K_shared, Q_shared, scores, transpose_B=True, clear_accum=True)
    for i, h in T.Parallel(block_N, heads):
        scores[i, h] = T.max(scores[i, h], 0) * W_shared[h]
    T.reduce_sum(scores, logits, dim=1)
    for i in T.Parallel(block_N):
        logits[i] = T.if_then_else(first_key + i < end, logits[i] * K_scale_shared[i], -T.infinity("float32"))
