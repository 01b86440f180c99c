"""Sparse MLA attention (DeepSeek Sparse Attention's, MQA mode): each query token attends to the
keys its top-k indices name, out of one latent KV a token shared by every head:

    p[t, h, i] = softmax_i(sm_scale * q[t, h] . kv[indices[t, i]])     over valid i
    out[t, h]  = sum_i p[t, h, i] * kv[indices[t, i], :d_v]

q [S, h_q, d_qk] and kv [S_kv, 1, d_qk] in bfloat16 (DeepSeek-V3.2: d_qk 576, the 512 latent
dims then 64 RoPE dims; the value is the latent part, d_v 512). An index is invalid when it is
negative or not below S_kv; a row with no valid index gives out 0 and lse +inf (FlashMLA's
convention). A program takes one token's block_H heads; each step gathers block_I indexed KV
rows into shared memory, and the scores are two gemms (the latent part, then the RoPE tail)
under flash attention's online softmax; P goes through shared memory to the value gemm.
"""

import math

import tilec
import tilec.language as T
from tilec import capture

from ..attention import FAST_MATH, LOG2E, divide_rows, online_softmax
from ..device import on_gpu

CONFIG = dict(block_H=64, block_I=64, threads=256)
CPU_CONFIG = dict(block_H=16, block_I=32, threads=128)


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_kernel(seq, seq_kv, heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64,
                              threads=256):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    scale = sm_scale * LOG2E
    steps = T.ceildiv(topk, block_I)

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"),
             Indices: T.Tensor((seq, 1, topk), "int32"), Out: T.Tensor((seq, heads, dim), "bfloat16"),
             LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq, T.ceildiv(heads, block_H), threads=threads) as (t, hb):
            Q_shared = T.alloc_shared((block_H, dim), "bfloat16")
            Q_tail_shared = T.alloc_shared((block_H, tail_dim), "bfloat16")
            KV_shared = T.alloc_shared((block_I, dim), "bfloat16")
            K_tail_shared = T.alloc_shared((block_I, tail_dim), "bfloat16")
            index_shared = T.alloc_shared((block_I,), "int32")
            # P reaches the value gemm through shared memory: that gemm splits the value's dims
            # over the warpgroups, the score gemm its keys
            P_shared = T.alloc_shared((block_H, block_I), "bfloat16")
            scores = T.alloc_fragment((block_H, block_I), "float32")
            probs = T.alloc_fragment((block_H, block_I), "bfloat16")
            acc_o = T.alloc_fragment((block_H, dim), "float32")
            row_max = T.alloc_fragment((block_H,), "float32")
            row_max_prev = T.alloc_fragment((block_H,), "float32")
            row_max_finite = T.alloc_fragment((block_H,), "float32")
            rescale = T.alloc_fragment((block_H,), "float32")
            row_sum = T.alloc_fragment((block_H,), "float32")
            denominator = T.alloc_fragment((block_H,), "float32")
            lse = T.alloc_fragment((block_H,), "float32")
            h0 = hb * block_H
            T.copy(Q[t, h0:h0 + block_H, 0:dim], Q_shared)
            T.copy(Q[t, h0:h0 + block_H, dim:dim + tail_dim], Q_tail_shared)
            T.fill(acc_o, 0)
            T.fill(denominator, 0)
            T.fill(row_max, -T.infinity("float32"))
            for k in T.Pipelined(steps, num_stages=1):
                for i in T.Parallel(block_I):
                    slot = k * block_I + i
                    index = T.if_then_else(slot < topk, Indices[t, 0, T.min(slot, topk - 1)], -1)
                    index_shared[i] = T.if_then_else((index >= 0) & (index < seq_kv), index, -1)
                # invalid keys gather zeros, and their scores are masked below
                for i, d in T.Parallel(block_I, dim):
                    KV_shared[i, d] = T.if_then_else(index_shared[i] >= 0, KV[T.max(index_shared[i], 0), 0, d], 0)
                for i, d in T.Parallel(block_I, tail_dim):
                    K_tail_shared[i, d] = T.if_then_else(index_shared[i] >= 0,
                                                         KV[T.max(index_shared[i], 0), 0, dim + d], 0)
                T.gemm(Q_shared, KV_shared, scores, transpose_B=True, clear_accum=True)
                T.gemm(Q_tail_shared, K_tail_shared, scores, transpose_B=True)
                for h, i in T.Parallel(block_H, block_I):
                    scores[h, i] = T.if_then_else(index_shared[i] >= 0, scores[h, i], -T.infinity("float32"))
                online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum,
                               denominator, scale, block_H, block_I, dim)
                T.copy(probs, P_shared)
                T.gemm(P_shared, KV_shared, acc_o)
            divide_rows(acc_o, denominator, block_H, dim)
            for h in T.Parallel(block_H):
                lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                        T.infinity("float32"))
            T.copy(acc_o, Out[t, h0:h0 + block_H, :])
            T.copy(lse, LSE[t, h0:h0 + block_H])

    return main


def sparse_mla_prefill(q, kv, indices, sm_scale=None, d_v=512):
    """(out, lse) of sparse MLA attention: query token t's heads attend to the keys
    indices[t, 0, :] names (FlashMLA's flash_mla_sparse_fwd).

    q [S, h_q, d_qk] and kv [S_kv, 1, d_qk] bfloat16; indices [S, 1, topk] int32, an entry
    invalid when negative or not below S_kv. The value is kv's first d_v dims. sm_scale defaults
    to 1 / sqrt(d_qk). Returns out [S, h_q, d_v] bfloat16 and lse [S, h_q] float32 (natural log
    of each row's softmax denominator; +inf, with out 0, for a row with no valid index)."""
    q_shape, kv_shape, index_shape = (tuple(x.shape) for x in (q, kv, indices))
    for name, shape, dims in (("q", q_shape, 3), ("kv", kv_shape, 3), ("indices", index_shape, 3)):
        if len(shape) != dims:
            raise ValueError(f"{name} must have {dims} dims, not {len(shape)}: {shape}")
    S, heads, d_qk = q_shape
    S_kv = kv_shape[0]
    if kv_shape[1:] != (1, d_qk):
        raise ValueError(f"kv must be [S_kv, 1, {d_qk}] (one latent KV a token, q's d_qk), not {kv_shape}")
    if index_shape[:2] != (S, 1) or index_shape[2] < 1:
        raise ValueError(f"indices must be [{S}, 1, topk] with topk >= 1, not {index_shape}")
    for name, x, dtype in (("q", q, "bfloat16"), ("kv", kv, "bfloat16"), ("indices", indices, "int32")):
        if capture.tensor_dtype_name(x) != dtype:
            raise ValueError(f"{name} must be {dtype}, not {capture.tensor_dtype_name(x)}")
    if isinstance(d_v, bool) or not isinstance(d_v, int) or not 16 <= d_v < d_qk or d_v % 16 or (d_qk - d_v) % 16:
        raise ValueError(f"d_v must be a multiple of 16 below d_qk = {d_qk}, leaving a multiple of 16, not {d_v!r}")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(d_qk)
    elif isinstance(sm_scale, bool) or not isinstance(sm_scale, (int, float)) or not math.isfinite(sm_scale) \
            or sm_scale <= 0:
        raise ValueError(f"sm_scale must be a positive finite number, not {sm_scale!r}")
    config = CONFIG if on_gpu(q) else CPU_CONFIG
    kernel = sparse_mla_prefill_kernel(S, S_kv, heads, d_v, d_qk - d_v, index_shape[2], float(sm_scale), **config)
    return kernel(q, kv, indices)
