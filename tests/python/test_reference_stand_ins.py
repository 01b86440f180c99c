"""bench/reference_stand_ins/flash_attn (the conformance runner's stand-in for FlashAttention-2's
Python API) against attention written out in float64 numpy, element by element of its
conventions: grouped-query heads, bottom-right causal alignment, rows that see no key, varlen
offsets, paged caches."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the flash_attn stand-in is torch code")

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "flash_attn_stand_in", ROOT / "bench" / "reference_stand_ins" / "flash_attn" / "__init__.py")
flash_attn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flash_attn)


def reference(q, k, v, causal, scale=None):
    """q (s_q, H, d), k/v (s_k, H_kv, d) as float64 arrays; FlashAttention-2's semantics."""
    s_q, heads, d = q.shape
    s_k, kv_heads, _ = k.shape
    scale = scale if scale is not None else 1 / math.sqrt(d)
    out = np.zeros((s_q, heads, v.shape[-1]))
    for h in range(heads):
        kh = h // (heads // kv_heads)
        for i in range(s_q):
            seen = [j for j in range(s_k) if not causal or j <= i + s_k - s_q]
            if not seen:
                continue
            logits = np.array([q[i, h] @ k[j, kh] * scale for j in seen])
            weights = np.exp(logits - logits.max())
            out[i, h] = (weights[:, None] * v[seen, kh]).sum(0) / weights.sum()
    return out


def as64(t):
    return t.double().numpy()


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_matches_float64_attention_per_sequence(causal):
    gen = torch.Generator().manual_seed(0)
    lengths_q, lengths_k = [5, 1, 7], [3, 6, 7]  # s_q > s_k: the first rows see no key when causal
    heads, kv_heads, d = 4, 2, 8
    q = torch.randn(sum(lengths_q), heads, d, generator=gen)
    k = torch.randn(sum(lengths_k), kv_heads, d, generator=gen)
    v = torch.randn(sum(lengths_k), kv_heads, d, generator=gen)
    cu_q = torch.tensor([0, *np.cumsum(lengths_q)], dtype=torch.int32)
    cu_k = torch.tensor([0, *np.cumsum(lengths_k)], dtype=torch.int32)
    out = flash_attn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k), 0.0, causal=causal)
    for b in range(3):
        q0, q1, k0, k1 = cu_q[b], cu_q[b + 1], cu_k[b], cu_k[b + 1]
        expected = reference(as64(q[q0:q1]), as64(k[k0:k1]), as64(v[k0:k1]), causal)
        np.testing.assert_allclose(as64(out[q0:q1]), expected, rtol=1e-5, atol=1e-5)
    if causal:
        assert torch.all(out[:2] == 0)  # sequence 0: rows 0 and 1 of 5 see none of its 3 keys


def test_kvcache_reads_cache_seqlens_keys_and_pages_like_the_contiguous_cache():
    gen = torch.Generator().manual_seed(1)
    batch, heads, kv_heads, d, page, pages_each = 2, 4, 1, 8, 4, 3
    q = torch.randn(batch, 1, heads, d, generator=gen)
    cache_k = torch.randn(batch, page * pages_each, kv_heads, d, generator=gen)
    cache_v = torch.randn(batch, page * pages_each, kv_heads, d, generator=gen)
    lengths = torch.tensor([5, 12], dtype=torch.int32)
    out = flash_attn.flash_attn_with_kvcache(q, cache_k, cache_v, cache_seqlens=lengths, softmax_scale=0.3)
    for b in range(batch):
        n = int(lengths[b])
        expected = reference(as64(q[b]), as64(cache_k[b, :n]), as64(cache_v[b, :n]), False, scale=0.3)
        np.testing.assert_allclose(as64(out[b]), expected, rtol=1e-5, atol=1e-5)
    # The same cache as shuffled pages behind a block table.
    order = torch.randperm(batch * pages_each, generator=gen)
    paged_k = torch.empty(batch * pages_each, page, kv_heads, d)
    paged_v = torch.empty_like(paged_k)
    table = torch.empty(batch, pages_each, dtype=torch.int32)
    for b in range(batch):
        for p in range(pages_each):
            slot = int(order[b * pages_each + p])
            paged_k[slot] = cache_k[b, p * page:(p + 1) * page]
            paged_v[slot] = cache_v[b, p * page:(p + 1) * page]
            table[b, p] = slot
    paged = flash_attn.flash_attn_with_kvcache(q, paged_k, paged_v, cache_seqlens=lengths, block_table=table,
                                               softmax_scale=0.3)
    torch.testing.assert_close(paged, out)


def test_arguments_it_cannot_honour_are_refused():
    q = torch.randn(1, 2, 2, 8)
    with pytest.raises(NotImplementedError, match="dropout_p=0.1"):
        flash_attn.flash_attn_func(q, q, q, dropout_p=0.1)
    with pytest.raises(NotImplementedError, match="window_size"):
        flash_attn.flash_attn_func(q, q, q, window_size=(4, 0))
