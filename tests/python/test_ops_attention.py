"""tilec.ops.flash_attention against softmax(Q K^T * scale) V in float64, on the GPU where
there is one, else on the CPU backend: odd lengths, causal (bottom-right when the lengths
differ, rows that see no key), grouped-query and multi-query heads, every head dim, both
layouts and both 16-bit types. Also NVRTC builds of its kernel for each head dim."""

import numpy as np
import pytest

import tilec
from tilec import ops
from tilec.ops import attention

from helpers import assert_close, rand, rng  # noqa: F401  (rng is a fixture)
from test_ops import on_target, to_numpy


def attention_reference(q, k, v, causal, sm_scale, layout):
    """(O, |P| |V|, LSE) in float64, in `layout`: O's rows that see no key are 0, their LSE -inf."""
    if layout == "bhsd":
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k64, v64 = np.repeat(k64, group, axis=2), np.repeat(v64, group, axis=2)
    scores = np.einsum("bqhd,bkhd->bhqk", q64, k64) * sm_scale
    seq_q, seq_kv = q.shape[1], k.shape[1]
    if causal:
        seen = np.arange(seq_kv)[None, :] <= np.arange(seq_q)[:, None] + (seq_kv - seq_q)
        scores = np.where(seen, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0))
    total = probs.sum(axis=-1, keepdims=True)
    probs /= np.where(total > 0, total, 1)
    out = np.einsum("bhqk,bkhd->bhqd", probs, v64)
    magnitude = np.einsum("bhqk,bkhd->bhqd", probs, np.abs(v64))
    with np.errstate(divide="ignore"):
        lse = np.where(total[..., 0] > 0, np.log(total[..., 0]) + np.where(np.isfinite(row_max), row_max, 0)[..., 0],
                       -np.inf)
    if layout == "bshd":
        out, magnitude = out.transpose(0, 2, 1, 3), magnitude.transpose(0, 2, 1, 3)
    return out, magnitude, lse


CASES = [
    # batch, seq_q, seq_kv, heads, heads_kv, dim, causal, layout, dtype
    (2, 70, 70, 4, 4, 64, False, "bshd", "float16"),   # partial blocks
    (2, 70, 70, 4, 4, 64, True, "bshd", "bfloat16"),
    (1, 37, 100, 4, 2, 64, True, "bhsd", "float16"),   # GQA; causal with more keys than queries
    (1, 100, 37, 4, 1, 64, True, "bshd", "float16"),   # MQA; the first 63 rows see no key
    (1, 130, 90, 2, 1, 128, False, "bhsd", "bfloat16"),
    (1, 65, 65, 2, 2, 256, True, "bshd", "float16"),
]


@pytest.mark.parametrize("batch,seq_q,seq_kv,heads,heads_kv,dim,causal,layout,dtype", CASES)
def test_flash_attention(batch, seq_q, seq_kv, heads, heads_kv, dim, causal, layout, dtype, rng):
    def shape(seq, h):
        return (batch, seq, h, dim) if layout == "bshd" else (batch, h, seq, dim)

    q = rand(shape(seq_q, heads), dtype, rng)
    k, v = (rand(shape(seq_kv, heads_kv), dtype, rng) for _ in range(2))
    sm_scale = 0.7 / np.sqrt(dim)
    out, lse = ops.flash_attention(*on_target(q, k, v), causal=causal, sm_scale=sm_scale, layout=layout,
                                   return_lse=True)
    expected, magnitude, expected_lse = attention_reference(q, k, v, causal, sm_scale, layout)
    # P rounds to 16 bits before P V, and O once more: within the type's tolerance of the terms.
    out = to_numpy(out, dtype)
    assert_close(out, expected, dtype, scale=magnitude)
    lse = lse.cpu().numpy() if hasattr(lse, "cpu") else lse
    assert_close(lse, expected_lse, "float32", rtol=1e-4, what="lse")
    if causal and seq_q > seq_kv:  # rows that see no key: exactly 0, never NaN
        empty = seq_q - seq_kv
        rows = out[:, :empty] if layout == "bshd" else out[:, :, :empty]
        assert not np.any(rows.astype(np.float32))


def test_default_scale_and_layout(rng):
    q, k, v = (rand((1, 40, 2, 64), "float16", rng) for _ in range(3))
    out = ops.flash_attention(*on_target(q, k, v))
    expected, magnitude, _ = attention_reference(q, k, v, False, 1 / 8, "bshd")
    assert_close(to_numpy(out, "float16"), expected, "float16", scale=magnitude)


def test_errors_name_the_argument(rng):
    q = rand((1, 16, 4, 64), "float16", rng)
    kv = rand((1, 16, 4, 64), "float16", rng)
    cases = [
        (dict(q=q[0], k=kv, v=kv), "q must have 4 dims"),
        (dict(q=q, k=kv, v=kv[:, :8]), "k and v must have one shape"),
        (dict(q=q.astype(np.float32), k=kv, v=kv), "q must be float16 or bfloat16, not float32"),
        (dict(q=q, k=rand((1, 16, 4, 64), "bfloat16", rng), v=kv), "k must be float16 like q"),
        (dict(q=q, k=rand((2, 16, 4, 64), "float16", rng), v=rand((2, 16, 4, 64), "float16", rng)),
         "k has batch 2 but q has 1"),
        (dict(q=rand((1, 16, 4, 32), "float16", rng), k=rand((1, 16, 4, 32), "float16", rng),
              v=rand((1, 16, 4, 32), "float16", rng)), "head dim must be one of (64, 128, 256), not 32"),
        (dict(q=q, k=rand((1, 16, 3, 64), "float16", rng), v=rand((1, 16, 3, 64), "float16", rng)),
         "k's 3 heads must divide q's 4"),
        (dict(q=q, k=kv, v=kv, layout="sbhd"), "layout must be 'bshd' or 'bhsd'"),
        (dict(q=q, k=kv, v=kv, sm_scale=-1.0), "sm_scale must be a positive finite number"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ops.flash_attention(**kwargs)


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_CONFIGS), ("sm_80", attention.GPU_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_kernel_builds_for_cuda(arch, configs, dim, causal):
    retargeted = tilec.jit(attention.attention_forward.__wrapped__, out_idx=[3, 4], target="cuda", arch=arch)
    try:
        kernel = retargeted.compile(batch=2, heads=8, heads_kv=2, seq_q=1000, seq_kv=1500, dim=dim, causal=causal,
                                    sm_scale=0.1, dtype="bfloat16", **configs[dim])
    except RuntimeError as e:
        if str(e).startswith("cannot compile CUDA kernels:"):
            pytest.skip(str(e))
        raise
    source = kernel.get_kernel_source()
    assert ("wgmma" in source) == (arch == "sm_90a")
