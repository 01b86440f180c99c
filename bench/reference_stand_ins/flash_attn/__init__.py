"""A stand-in for the `flash_attn` package (FlashAttention-2's Python API), in plain torch.

TileLang's varlen attention and sparse GQA decode examples check their kernels against
flash_attn, which has no wheel on PyPI (it builds CUDA from source for hours). The
conformance runner (bench/tilelang_conformance.py) puts this folder on the programs' path only
when the real package is not installed, and reports every program that imported it.

Each function computes softmax(Q K^T * scale) V in float32, one sequence at a time, with
FlashAttention-2's conventions: grouped-query heads (query head h reads key head
h // (heads / kv_heads)), causal masks aligned bottom-right (query i of s_q sees key j when
j <= i + s_k - s_q), and a zero output row where a query sees no key. Arguments this stand-in
cannot honour (dropout, sliding windows, softcapping, ALiBi, rotary, appending to the cache)
raise NotImplementedError rather than being ignored.
"""

import math
import sys

import torch

__version__ = "2.7.4+torch-stand-in"

print("[conformance] flash_attn is the torch stand-in of bench/reference_stand_ins", file=sys.stderr)


def _refuse(name, value, default):
    if value != default:
        raise NotImplementedError(f"flash_attn stand-in: {name}={value!r} is not supported (only {default!r})")


def _attend(q, k, v, scale, causal):
    """q (s_q, H, d), k (s_k, H_kv, d), v (s_k, H_kv, d_v) -> (s_q, H, d_v) in q's dtype."""
    heads, kv_heads = q.shape[1], k.shape[1]
    if heads % kv_heads:
        raise ValueError(f"flash_attn stand-in: {heads} query heads are not a multiple of {kv_heads} key heads")
    group = heads // kv_heads
    k = k.float().repeat_interleave(group, dim=1)
    v = v.float().repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q.float(), k) * scale
    if causal:
        s_q, s_k = q.shape[0], k.shape[0]
        rows = torch.arange(s_q, device=q.device)[:, None]
        cols = torch.arange(s_k, device=q.device)[None, :]
        scores = scores.masked_fill(cols > rows + (s_k - s_q), float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    p = torch.exp(scores - row_max)
    total = p.sum(dim=-1, keepdim=True)
    out = torch.einsum("hqk,khd->qhd", p / torch.where(total > 0, total, torch.ones_like(total)), v)
    return out.to(q.dtype)


def _scale(softmax_scale, d):
    return softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(d)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """q (batch, s_q, H, d); k, v (batch, s_k, H_kv, d)."""
    _refuse("dropout_p", dropout_p, 0.0)
    _refuse("window_size", tuple(window_size), (-1, -1))
    _refuse("softcap", softcap, 0.0)
    _refuse("alibi_slopes", alibi_slopes, None)
    _refuse("return_attn_probs", return_attn_probs, False)
    scale = _scale(softmax_scale, q.shape[-1])
    return torch.stack([_attend(q[b], k[b], v[b], scale, causal) for b in range(q.shape[0])])


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None):
    """q (total_q, H, d); k, v (total_k, H_kv, d); sequence b is rows cu_seqlens[b]:cu_seqlens[b + 1]."""
    _refuse("dropout_p", dropout_p, 0.0)
    _refuse("window_size", tuple(window_size), (-1, -1))
    _refuse("softcap", softcap, 0.0)
    _refuse("alibi_slopes", alibi_slopes, None)
    _refuse("return_attn_probs", return_attn_probs, False)
    _refuse("block_table", block_table, None)
    scale = _scale(softmax_scale, q.shape[-1])
    starts_q, starts_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    out = torch.zeros(q.shape[0], q.shape[1], v.shape[-1], dtype=q.dtype, device=q.device)
    for b in range(len(starts_q) - 1):
        q0, q1, k0, k1 = starts_q[b], starts_q[b + 1], starts_k[b], starts_k[b + 1]
        out[q0:q1] = _attend(q[q0:q1], k[k0:k1], v[k0:k1], scale, causal)
    return out


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None, cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0, return_softmax_lse=False):
    """q (batch, s_q, H, d); the cache (batch, s_cache, H_kv, d), or pages (blocks, page, H_kv, d) read
    through block_table (batch, pages per sequence); sequence b has cache_seqlens[b] keys."""
    _refuse("k", k, None)
    _refuse("v", v, None)
    _refuse("rotary_cos", rotary_cos, None)
    _refuse("cache_batch_idx", cache_batch_idx, None)
    _refuse("cache_leftpad", cache_leftpad, None)
    _refuse("window_size", tuple(window_size), (-1, -1))
    _refuse("softcap", softcap, 0.0)
    _refuse("alibi_slopes", alibi_slopes, None)
    _refuse("return_softmax_lse", return_softmax_lse, False)
    batch = q.shape[0]
    scale = _scale(softmax_scale, q.shape[-1])
    if cache_seqlens is None:
        lengths = [k_cache.shape[1] if block_table is None else block_table.shape[1] * k_cache.shape[1]] * batch
    elif isinstance(cache_seqlens, int):
        lengths = [cache_seqlens] * batch
    else:
        lengths = cache_seqlens.tolist()
    outs = []
    for b in range(batch):
        if block_table is None:
            keys, values = k_cache[b], v_cache[b]
        else:
            pages = block_table[b].long()
            keys = k_cache[pages].flatten(0, 1)
            values = v_cache[pages].flatten(0, 1)
        outs.append(_attend(q[b], keys[:lengths[b]], values[:lengths[b]], scale, causal))
    return torch.stack(outs)
