"""The lightning indexer of DeepSeek Sparse Attention: for each query t and key s in t's range
[ks[t], ke[t]),

    logits[t, s] = k_scale[s] * sum_h w[t, h] * ReLU(q[t, h] . k[s])

with q [S, H, D] and k [S_kv, D] in float8_e4m3 (one key a token, shared by the heads), and
-inf outside the range. Each program takes one query's H rows against block_N keys a step, the
keys as the gemm's rows: the head sum is then a sum along each accumulator row, and only the
query's own key blocks are read.
"""

import tilec
import tilec.language as T
from tilec import capture

from ..device import on_gpu

FP8 = "float8_e4m3"
CONFIG = dict(block_N=128, num_stages=2, threads=128)
CPU_CONFIG = dict(block_N=64, num_stages=1, threads=128)


@tilec.jit(out_idx=[-1])
def indexer_logits_kernel(seq, seq_kv, heads, dim, max_len=0, block_N=128, num_stages=2, threads=128):
    # max_len 0: logits [seq, seq_kv], key s in column s. max_len > 0 (the compressed form):
    # logits [seq, max_len], key ks[t] + c in column c, the range cut to its first max_len keys.
    width = max_len if max_len else seq_kv

    @T.prim_func
    def main(Q: T.Tensor((seq * heads, dim), FP8), K: T.Tensor((seq_kv, dim), FP8),
             K_scale: T.Tensor((seq_kv,), "float32"), W: T.Tensor((seq, heads), "float32"),
             KS: T.Tensor((seq,), "int32"), KE: T.Tensor((seq,), "int32"),
             Logits: T.Tensor((seq, width), "float32")):
        with T.Kernel(seq, threads=threads) as t:
            Q_shared = T.alloc_shared((heads, dim), FP8)
            K_shared = T.alloc_shared((block_N, dim), FP8)
            W_shared = T.alloc_shared((heads,), "float32")
            K_scale_shared = T.alloc_shared((block_N,), "float32")
            scores = T.alloc_fragment((block_N, heads), "float32")
            logits = T.alloc_fragment((block_N,), "float32")
            start = T.min(T.max(KS[t], 0), seq_kv)
            end = T.max(T.min(KE[t], seq_kv, start + max_len) if max_len else T.min(KE[t], seq_kv), start)
            # the column of the range's first key
            first_column = 0 if max_len else start
            T.copy(Q[t * heads, 0], Q_shared)
            T.copy(W[t, 0], W_shared)
            for n in T.Pipelined(T.ceildiv(end - start, block_N), num_stages=num_stages):
                T.copy(K[start + n * block_N, 0], K_shared)
                T.copy(K_scale[start + n * block_N], K_scale_shared)
                T.gemm(K_shared, Q_shared, scores, transpose_B=True, clear_accum=True)
                for i, h in T.Parallel(block_N, heads):
                    scores[i, h] = T.max(scores[i, h], 0) * W_shared[h]
                T.reduce_sum(scores, logits, dim=1)
                for i in T.Parallel(block_N):
                    logits[i] = T.if_then_else(start + n * block_N + i < end, logits[i] * K_scale_shared[i],
                                               -T.infinity("float32"))
                T.copy(logits, Logits[t, first_column + n * block_N])
            # -inf in every column no step wrote: before the range (full form) and after it
            for n in T.serial(T.ceildiv(first_column, block_N)):
                for i in T.Parallel(block_N):
                    if n * block_N + i < first_column:
                        Logits[t, n * block_N + i] = -T.infinity("float32")
            written = first_column + T.ceildiv(end - start, block_N) * block_N
            for n in T.serial(T.ceildiv(T.max(width - written, 0), block_N)):
                for i in T.Parallel(block_N):
                    if written + n * block_N + i < width:
                        Logits[t, written + n * block_N + i] = -T.infinity("float32")

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


def indexer_logits(q, k, k_scale, weights, ks, ke, max_len=None):
    """The lightning indexer's logits: for query t and key s with ks[t] <= s < ke[t],
    k_scale[s] * sum_h weights[t, h] * ReLU(q[t, h] . k[s]); -inf elsewhere.

    q [S, H, D] and k [S_kv, D] float8_e4m3; k_scale [S_kv], weights [S, H] float32 (the caller
    folds q's scales and any constant factor into weights); ks, ke [S] int32 (causal prefill:
    ks = 0, ke = t + 1; a range reaching outside [0, S_kv) is cut to it). Returns float32 logits
    [S, S_kv]; with max_len, the compressed form [S, max_len], where column c holds key
    ks[t] + c (keys from ks[t] + max_len on are left out, and columns past ke[t] are -inf)."""
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
    config = CONFIG if on_gpu(q) else CPU_CONFIG
    kernel = indexer_logits_kernel(S, S_kv, H, D, max_len=max_len or 0, **config)
    return kernel(q.reshape(S * H, D), k, k_scale, weights, ks, ke)
