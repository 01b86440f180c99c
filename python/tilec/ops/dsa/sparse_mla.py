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


import tilec
import tilec.language as T
from tilec import capture

from ..attention import FAST_MATH, LOG2E, divide_rows, online_softmax, softmax_scale
from ..device import config_for, for_device_of, is_hopper
from .cache_bytes import bfloat16_at, float32_at
from .fp8_cache import FP8_DIM, FP8_GROUP, FP8_TAIL, FP8_TOKEN_BYTES, as_bytes, scales_and_rope
from .sparse_indices import index_at, token_and_head_block
from .sparse_mla_hopper import (HOPPER_CONFIG, HOPPER_DECODE_CONFIG, hopper_fits, sparse_mla_decode_hopper_kernel,
                                sparse_mla_prefill_hopper_kernel)
from .sparse_mla_seesaw import SEESAW_CONFIG, seesaw_fits, sparse_mla_prefill_seesaw_kernel

CONFIG = dict(block_H=64, block_I=64, threads=256)
PREFILL_CONFIG = dict(CONFIG, num_stages=2)  # 2 stages of gathered keys: 224 KiB of shared memory
CPU_CONFIG = dict(block_H=16, block_I=32, threads=128)
AMD_CONFIG = dict(block_H=16, block_I=32, threads=128)  # 64 KiB of LDS a block
AMD_DECODE_CONFIG = dict(block_H=16, block_I=16, threads=128)  # room for the gathered tokens' bytes too


def sparse_buffers(block_H, block_I, dim, tail_dim):
    """A program's tiles: the query heads' latent and RoPE parts, the gathered keys' (the latent
    part is the value too) and their indices (-1: invalid), P (it reaches the value gemm through
    shared memory: that gemm splits the value's dims over the warpgroups, the score gemm its
    keys), and the online softmax's state."""
    return (T.alloc_shared((block_H, dim), "bfloat16"), T.alloc_shared((block_H, tail_dim), "bfloat16"),
            T.alloc_shared((block_I, dim), "bfloat16"), T.alloc_shared((block_I, tail_dim), "bfloat16"),
            T.alloc_shared((block_I,), "int32"), T.alloc_shared((block_H, block_I), "bfloat16"),
            T.alloc_fragment((block_H, block_I), "float32"), T.alloc_fragment((block_H, block_I), "bfloat16"),
            T.alloc_fragment((block_H, dim), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"),
            T.alloc_fragment((block_H,), "float32"), T.alloc_fragment((block_H,), "float32"))


@T.macro
def start_rows(Q, t, h0, Q_shared, Q_tail_shared, acc_o, row_max, denominator, block_H, dim, tail_dim):
    # Token t's heads h0.. into shared memory (latent part, RoPE tail), and the online
    # softmax's state at its start.
    T.copy(Q[t, h0:h0 + block_H, 0:dim], Q_shared)
    T.copy(Q[t, h0:h0 + block_H, dim:dim + tail_dim], Q_tail_shared)
    T.fill(acc_o, 0)
    T.fill(denominator, 0)
    T.fill(row_max, -T.infinity("float32"))


@T.macro
def attend_gathered(Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores, probs, acc_o,
                    row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale, block_H, block_I, dim):
    # One step over block_I gathered keys: scores by two gemms (latent, RoPE tail), the invalid
    # keys' masked, the online softmax, and O += P V. The score gemms are left in flight (on
    # Hopper) until the mask reads them: a pipelined loop issues its next gathers under them.
    T.gemm(Q_shared, KV_shared, scores, transpose_B=True, clear_accum=True, wg_wait=-1)
    T.gemm(Q_tail_shared, K_tail_shared, scores, transpose_B=True, wg_wait=-1)
    T.wait_wgmma(0)
    for h, i in T.Parallel(block_H, block_I):
        scores[h, i] = T.if_then_else(index_shared[i] >= 0, scores[h, i], -T.infinity("float32"))
    online_softmax(scores, probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator, scale,
                   block_H, block_I, dim)
    T.copy(probs, P_shared)
    T.gemm(P_shared, KV_shared, acc_o)


@T.macro
def gather_indices(Indices, row, k, topk, keys, index_shared, block_I):
    # Step k's indices of `row` into index_shared.
    for i in T.Parallel(block_I):
        index_shared[i] = index_at(Indices, row, k * block_I + i, topk, keys)


@T.macro
def finish_rows(acc_o, row_max, denominator, lse, scale, block_H, dim):
    # O over each row's denominator, and its natural log-sum-exp: +inf (and O 0) for a row that
    # had no valid key, as FlashMLA gives.
    divide_rows(acc_o, denominator, block_H, dim)
    for h in T.Parallel(block_H):
        lse[h] = T.if_then_else(denominator[h] > 0, (row_max[h] * scale + T.log2(denominator[h])) / LOG2E,
                                T.infinity("float32"))


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_prefill_kernel(heads, dim, tail_dim, topk, sm_scale, block_H=64, block_I=64, threads=256,
                              num_stages=1):
    # dim: the value's dims (the latent part); tail_dim: the query-key dims past it (RoPE).
    # The query and key counts are read at each call: one kernel for every length.
    seq, seq_kv = T.symbolic("seq"), T.symbolic("seq_kv")
    # With num_stages 2 the next step's keys are gathered (cp.async) while this step's are
    # attended to: the gathers read the indices from global memory, not index_shared, for that.
    scale = sm_scale * LOG2E

    @T.prim_func
    def main(Q: T.Tensor((seq, heads, dim + tail_dim), "bfloat16"),
             KV: T.Tensor((seq_kv, 1, dim + tail_dim), "bfloat16"), Indices: T.Tensor((seq, topk), "int32"),
             Out: T.Tensor((seq, heads, dim), "bfloat16"), LSE: T.Tensor((seq, heads), "float32")):
        with T.Kernel(seq * T.ceildiv(heads, block_H), threads=threads) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            (Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores, probs, acc_o, row_max,
             row_max_prev, row_max_finite, rescale, row_sum, denominator, lse) = sparse_buffers(block_H, block_I, dim,
                                                                                                 tail_dim)
            h0 = hb * block_H
            start_rows(Q, t, h0, Q_shared, Q_tail_shared, acc_o, row_max, denominator, block_H, dim, tail_dim)
            for k in T.Pipelined(T.ceildiv(topk, block_I), num_stages=num_stages):
                gather_indices(Indices, t, k, topk, seq_kv, index_shared, block_I)
                # invalid keys gather zeros (and their scores are masked)
                for i, d in T.Parallel(block_I, dim):
                    KV_shared[i, d] = T.if_then_else(index_at(Indices, t, k * block_I + i, topk, seq_kv) >= 0,
                                                     KV[T.max(index_at(Indices, t, k * block_I + i, topk, seq_kv), 0),
                                                        0, d], 0)
                for i, d in T.Parallel(block_I, tail_dim):
                    K_tail_shared[i, d] = T.if_then_else(index_at(Indices, t, k * block_I + i, topk, seq_kv) >= 0,
                                                         KV[T.max(index_at(Indices, t, k * block_I + i, topk, seq_kv),
                                                                  0), 0, dim + d], 0)
                attend_gathered(Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores,
                                probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator,
                                scale, block_H, block_I, dim)
            finish_rows(acc_o, row_max, denominator, lse, scale, block_H, dim)
            T.copy(acc_o, Out[t, h0:h0 + block_H, :])
            T.copy(lse, LSE[t, h0:h0 + block_H])

    return main


@T.macro
def gather_bytes(Cache, Indices, row, k, topk, part, first, block_I, count):
    # Bytes [first, first + count) of step k's tokens into `part`, as they are (by cp.async, 16
    # bytes at a time); zeros for an invalid slot.
    slots = Cache.shape[0]
    for i, b in T.Parallel(block_I, count):
        part[i, b] = T.if_then_else(index_at(Indices, row, k * block_I + i, topk, slots) >= 0,
                                    Cache[T.max(index_at(Indices, row, k * block_I + i, topk, slots), 0), first + b], 0)


@tilec.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def sparse_mla_decode_kernel(s_q, heads, topk, sm_scale, block_H=64, block_I=64, threads=256, num_stages=1):
    # tokens = B * s_q query tokens; LSE is [B, heads, s_q], FlashMLA's layout. With num_stages 2
    # the next step's bytes are gathered while this step's are dequantized and attended to.
    # The token and cache slot counts are read at each call.
    tokens, slots = T.symbolic("tokens"), T.symbolic("slots")
    dim, tail_dim, groups = FP8_DIM, FP8_TAIL, FP8_DIM // FP8_GROUP
    scale = sm_scale * LOG2E
    scales_at, tail_at = FP8_DIM, FP8_DIM + 4 * groups

    @T.prim_func
    def main(Q: T.Tensor((tokens, heads, dim + tail_dim), "bfloat16"),
             Cache: T.Tensor((slots, FP8_TOKEN_BYTES), "uint8"), Indices: T.Tensor((tokens, topk), "int32"),
             Out: T.Tensor((tokens, heads, dim), "bfloat16"), LSE: T.Tensor((tokens // s_q, heads, s_q), "float32")):
        with T.Kernel(tokens * T.ceildiv(heads, block_H), threads=threads) as program:
            t, hb = token_and_head_block(program, T.ceildiv(heads, block_H))
            (Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores, probs, acc_o, row_max,
             row_max_prev, row_max_finite, rescale, row_sum, denominator, lse) = sparse_buffers(block_H, block_I, dim,
                                                                                                 tail_dim)
            scales_shared = T.alloc_shared((block_I, groups), "float32")
            # a gathered token's bytes: its fp8 values, its scales', its RoPE dims'
            value_bytes = T.alloc_shared((block_I, dim), "uint8")
            scale_bytes = T.alloc_shared((block_I, 4 * groups), "uint8")
            tail_bytes = T.alloc_shared((block_I, 2 * tail_dim), "uint8")
            h0 = hb * block_H
            start_rows(Q, t, h0, Q_shared, Q_tail_shared, acc_o, row_max, denominator, block_H, dim, tail_dim)
            for k in T.Pipelined(T.ceildiv(topk, block_I), num_stages=num_stages):
                gather_indices(Indices, t, k, topk, slots, index_shared, block_I)
                # the gathered tokens' bytes into shared memory as they are (zeros for an
                # invalid slot, whose scores are masked), then each dequantized to bfloat16
                # (value times its group's scale), as FlashMLA does
                gather_bytes(Cache, Indices, t, k, topk, value_bytes, 0, block_I, dim)
                gather_bytes(Cache, Indices, t, k, topk, scale_bytes, scales_at, block_I, 4 * groups)
                gather_bytes(Cache, Indices, t, k, topk, tail_bytes, tail_at, block_I, 2 * tail_dim)
                for i, g in T.Parallel(block_I, groups):
                    scales_shared[i, g] = float32_at(scale_bytes, i, 4 * g)
                for i, d in T.Parallel(block_I, dim):  # one store (no local), so it moves vectors
                    KV_shared[i, d] = (T.Cast("float32", T.reinterpret(value_bytes[i, d], "float8_e4m3"))
                                       * scales_shared[i, d // FP8_GROUP])
                for i, d in T.Parallel(block_I, tail_dim):
                    K_tail_shared[i, d] = bfloat16_at(tail_bytes, i, 2 * d)
                attend_gathered(Q_shared, Q_tail_shared, KV_shared, K_tail_shared, index_shared, P_shared, scores,
                                probs, acc_o, row_max, row_max_prev, row_max_finite, rescale, row_sum, denominator,
                                scale, block_H, block_I, dim)
            finish_rows(acc_o, row_max, denominator, lse, scale, block_H, dim)
            T.copy(acc_o, Out[t, h0:h0 + block_H, :])
            for h in T.Parallel(block_H):
                if h0 + h < heads:
                    LSE[t // s_q, h0 + h, t % s_q] = lse[h]

    return main


def sparse_mla_decode(q, kv_cache, indices, sm_scale=None):
    """(out, lse) of sparse MLA decoding over DeepSeek-V3.2's FP8 KV cache (FlashMLA's
    flash_mla_with_kvcache in its sparse mode).

    q [B, s_q, h_q, 576] bfloat16. kv_cache: pages of tokens, [num_pages, page_size, 656] or
    [num_pages, page_size, 1, 656], uint8 (or float8_e4m3 holding the same bytes): a token's 512
    latent dims as float8_e4m3, their 4 float32 scales (one a 128 dims), then 64 RoPE dims as
    bfloat16. indices [B, s_q, topk] int32: physical slots (page * page_size + offset), invalid
    when negative or past the cache. sm_scale defaults to 1 / sqrt(576). Returns out
    [B, s_q, h_q, 512] bfloat16 and lse [B, h_q, s_q] float32 (+inf, with out 0, for a query with
    no valid index)."""
    q_shape, cache_shape, index_shape = (tuple(x.shape) for x in (q, kv_cache, indices))
    d_qk = FP8_DIM + FP8_TAIL
    if len(q_shape) != 4 or q_shape[3] != d_qk:
        raise ValueError(f"q must be [B, s_q, h_q, {d_qk}], not {q_shape}")
    B, s_q, heads, _ = q_shape
    if len(cache_shape) not in (3, 4) or cache_shape[-1] != FP8_TOKEN_BYTES or \
            (len(cache_shape) == 4 and cache_shape[2] != 1):
        raise ValueError(f"kv_cache must be [num_pages, page_size, {FP8_TOKEN_BYTES}] or [num_pages, page_size, 1, "
                         f"{FP8_TOKEN_BYTES}] (a token in {FP8_TOKEN_BYTES} bytes), not {cache_shape}")
    if len(index_shape) != 3 or index_shape[:2] != (B, s_q) or index_shape[2] < 1:
        raise ValueError(f"indices must be [{B}, {s_q}, topk] with topk >= 1, not {index_shape}")
    if capture.tensor_dtype_name(q) != "bfloat16":
        raise ValueError(f"q must be bfloat16, not {capture.tensor_dtype_name(q)}")
    if capture.tensor_dtype_name(indices) != "int32":
        raise ValueError(f"indices must be int32, not {capture.tensor_dtype_name(indices)}")
    cache_type = str(T.dtype(capture.tensor_dtype_name(kv_cache)))
    if cache_type not in ("uint8", "float8_e4m3"):
        raise ValueError(f"kv_cache must be uint8 (or float8_e4m3) bytes, not {cache_type}")
    sm_scale = softmax_scale(sm_scale, d_qk)
    slots = cache_shape[0] * cache_shape[1]
    cache = kv_cache.reshape(slots, FP8_TOKEN_BYTES)
    if cache_type != "uint8":
        cache = as_bytes(cache)
    topk = index_shape[2]
    q_rows, index_rows = q.reshape(B * s_q, heads, d_qk), indices.reshape(B * s_q, topk)
    if is_hopper(q):  # warp-specialized: 1.6x the T.Pipelined kernel on the H200 (docs/dsa.md)
        kernel = sparse_mla_decode_hopper_kernel(s_q, heads, topk, sm_scale, **HOPPER_DECODE_CONFIG)
        out, lse = kernel(q_rows, cache, *scales_and_rope(cache), index_rows)
    else:
        config = config_for(q, gpu=CONFIG, amd=AMD_DECODE_CONFIG, cpu=CPU_CONFIG)
        kernel = for_device_of(q, sparse_mla_decode_kernel)(s_q, heads, topk, sm_scale, **config)
        out, lse = kernel(q_rows, cache, index_rows)
    return out.reshape(B, s_q, heads, FP8_DIM), lse


def sparse_mla_prefill(q, kv, indices, sm_scale=None, d_v=512, out=None):
    """(out, lse) of sparse MLA attention: query token t's heads attend to the keys
    indices[t, 0, :] names (FlashMLA's flash_mla_sparse_fwd).

    q [S, h_q, d_qk] and kv [S_kv, 1, d_qk] bfloat16; indices [S, 1, topk] int32, an entry
    invalid when negative or not below S_kv. The value is kv's first d_v dims. sm_scale defaults
    to 1 / sqrt(d_qk). Returns out [S, h_q, d_v] bfloat16 and lse [S, h_q] float32 (natural log
    of each row's softmax denominator; +inf, with out 0, for a row with no valid index). With
    out = (out, lse) of those shapes, it writes them there instead and returns them."""
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
    sm_scale = softmax_scale(sm_scale, d_qk)
    shape = (heads, d_v, d_qk - d_v, index_shape[2], sm_scale)
    # the seesaw where it fits: 0.69x cuBLAS bf16 against the Hopper kernel's 0.66x (H100, bench/RESULTS.md,
    # forty-fourth session)
    if is_hopper(q) and seesaw_fits(d_v, d_qk - d_v, index_shape[2]):
        kernel = sparse_mla_prefill_seesaw_kernel(*shape, **SEESAW_CONFIG)
    elif is_hopper(q) and hopper_fits(d_v, d_qk - d_v):
        kernel = sparse_mla_prefill_hopper_kernel(*shape, **HOPPER_CONFIG)
    else:
        kernel = for_device_of(q, sparse_mla_prefill_kernel)(*shape, **config_for(q, gpu=PREFILL_CONFIG, amd=AMD_CONFIG, cpu=CPU_CONFIG))
    if out is None:
        return kernel(q, kv, indices.reshape(S, index_shape[2]))
    kernel(q, kv, indices.reshape(S, index_shape[2]), *out)
    return out
