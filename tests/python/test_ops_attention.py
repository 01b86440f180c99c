"""tilec.ops.flash_attention against softmax(Q K^T * scale) V in float64, on the GPU where
there is one, else on the CPU backend: odd lengths, causal (bottom-right when the lengths
differ, rows that see no key), grouped-query and multi-query heads, every head dim, both
layouts and both 16-bit types; split-KV (num_splits); packed sequences (varlen); its gradients
(flash_attention_backward, and through torch's autograd) likewise. Also NVRTC builds of each
kernel for each head dim."""

import re

import numpy as np
import pytest

from tilec import ops
from tilec.ops import attention
from tilec.ops.device import for_device_of

from helpers import assert_close, build_for_cuda, compiled_kernels, rand, rng  # noqa: F401  (rng is a fixture)
from test_ops import ON_GPU, on_target, to_numpy


def probabilities(q64, k64, causal, sm_scale):
    """(P [b, h, q, k], its rows' max, its rows' sum before normalizing) of bshd float64 q and
    k (k repeated to q's heads); a row that sees no key has P 0."""
    scores = np.einsum("bqhd,bkhd->bhqk", q64, k64) * sm_scale
    seq_q, seq_kv = q64.shape[1], k64.shape[1]
    if causal:
        seen = np.arange(seq_kv)[None, :] <= np.arange(seq_q)[:, None] + (seq_kv - seq_q)
        scores = np.where(seen, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0))
    total = probs.sum(axis=-1, keepdims=True)
    return probs / np.where(total > 0, total, 1), row_max, total


def attention_reference(q, k, v, causal, sm_scale, layout):
    """(O, |P| |V|, LSE) in float64, in `layout`: O's rows that see no key are 0, their LSE -inf."""
    if layout == "bhsd":
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k64, v64 = np.repeat(k64, group, axis=2), np.repeat(v64, group, axis=2)
    probs, row_max, total = probabilities(q64, k64, causal, sm_scale)
    out = np.einsum("bhqk,bkhd->bhqd", probs, v64)
    magnitude = np.einsum("bhqk,bkhd->bhqd", probs, np.abs(v64))
    with np.errstate(divide="ignore"):
        lse = np.where(total[..., 0] > 0, np.log(total[..., 0]) + np.where(np.isfinite(row_max), row_max, 0)[..., 0],
                       -np.inf)
    if layout == "bshd":
        out, magnitude = out.transpose(0, 2, 1, 3), magnitude.transpose(0, 2, 1, 3)
    return out, magnitude, lse


def gradients_reference(q, k, v, dout, causal, sm_scale, layout):
    """{name: (gradient, magnitude)} for dq, dk, dv in float64, in `layout`; magnitude is the
    sum of |terms| of each element (dk and dv summed over the heads sharing a K/V head)."""
    if layout == "bhsd":
        q, k, v, dout = (x.transpose(0, 2, 1, 3) for x in (q, k, v, dout))
    q64, k64, v64, do64 = (x.astype(np.float64) for x in (q, k, v, dout))
    batch, seq_q, heads, dim = q.shape
    seq_kv, heads_kv = k.shape[1], k.shape[2]
    group = heads // heads_kv
    k64, v64 = np.repeat(k64, group, axis=2), np.repeat(v64, group, axis=2)
    probs, _, _ = probabilities(q64, k64, causal, sm_scale)
    dprobs = np.einsum("bqhd,bkhd->bhqk", do64, v64)
    dscores = probs * (dprobs - (probs * dprobs).sum(axis=-1, keepdims=True)) * sm_scale
    abs_dscores = np.abs(probs) * (np.abs(dprobs) + np.abs(probs * dprobs).sum(axis=-1, keepdims=True)) * sm_scale

    def per_kv_head(x):  # [b, seq_kv, heads, d] summed over each K/V head's group
        return x.reshape(batch, seq_kv, heads_kv, group, dim).sum(axis=3)

    grads = {
        "dq": (np.einsum("bhqk,bkhd->bqhd", dscores, k64), np.einsum("bhqk,bkhd->bqhd", abs_dscores, np.abs(k64))),
        "dk": (per_kv_head(np.einsum("bhqk,bqhd->bkhd", dscores, q64)),
               per_kv_head(np.einsum("bhqk,bqhd->bkhd", abs_dscores, np.abs(q64)))),
        "dv": (per_kv_head(np.einsum("bhqk,bqhd->bkhd", probs, do64)),
               per_kv_head(np.einsum("bhqk,bqhd->bkhd", probs, np.abs(do64)))),
    }
    if layout == "bhsd":
        grads = {name: tuple(x.transpose(0, 2, 1, 3) for x in pair) for name, pair in grads.items()}
    return grads


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


@pytest.mark.parametrize("batch,seq_q,seq_kv,heads,heads_kv,dim,causal,layout,dtype",
                         [case for case in CASES if case[5] in attention.HOPPER_OVERLAP_DIMS])
def test_overlapped_forward(batch, seq_q, seq_kv, heads, heads_kv, dim, causal, layout, dtype, rng):
    """attention_forward's FlashAttention-3 order (overlap=True: the first block's scores before
    the loop, the last block's P V after it; asynchronous wgmma on Hopper) gives the same O and
    LSE, rows that see no key and a single key block included."""
    def shape(seq, h):
        return (batch, seq, h, dim) if layout == "bshd" else (batch, h, seq, dim)

    q = rand(shape(seq_q, heads), dtype, rng)
    k, v = (rand(shape(seq_kv, heads_kv), dtype, rng) for _ in range(2))
    q_t, k_t, v_t = on_target(q, k, v)
    config = dict(attention._config(q_t, dim), num_stages=2)
    kernel = attention.attention_forward(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, 0.1, layout=layout,
                                         dtype=dtype, overlap=True, **config)
    out, lse = kernel(q_t, k_t, v_t)
    expected, magnitude, expected_lse = attention_reference(q, k, v, causal, 0.1, layout)
    assert_close(to_numpy(out, dtype), expected, dtype, scale=magnitude)
    lse = lse.cpu().numpy() if hasattr(lse, "cpu") else lse
    assert_close(lse, expected_lse, "float32", rtol=1e-4, what="lse")


@pytest.fixture(params=[False, True], ids=["dq-atomics", "dq-in-shared"])
def dq_in_shared(request, monkeypatch):
    """The backward kernels' dQ shares added from registers, or (Hopper's way) through shared
    memory, each step's share added at the next step's start: on the CPU backend, both."""
    if request.param:
        if ON_GPU:
            pytest.skip("on a GPU the backward takes its target's configs")
        chosen = attention._config
        monkeypatch.setattr(attention, "_config", lambda tensor, dim, backward=False: dict(
            chosen(tensor, dim, backward), **({"dq_in_shared": True} if backward else {})))
    return request.param


@pytest.mark.parametrize("batch,seq_q,seq_kv,heads,heads_kv,dim,causal,layout,dtype", CASES)
def test_flash_attention_backward(batch, seq_q, seq_kv, heads, heads_kv, dim, causal, layout, dtype, rng, dq_in_shared):
    def shape(seq, h):
        return (batch, seq, h, dim) if layout == "bshd" else (batch, h, seq, dim)

    q, dout = (rand(shape(seq_q, heads), dtype, rng) for _ in range(2))
    k, v = (rand(shape(seq_kv, heads_kv), dtype, rng) for _ in range(2))
    sm_scale = 0.7 / np.sqrt(dim)
    q_t, k_t, v_t, dout_t = on_target(q, k, v, dout)
    out, lse = ops.flash_attention(q_t, k_t, v_t, causal=causal, sm_scale=sm_scale, layout=layout, return_lse=True)
    grads = ops.flash_attention_backward(q_t, k_t, v_t, out, lse, dout_t, causal=causal, sm_scale=sm_scale,
                                         layout=layout)
    expected = gradients_reference(q, k, v, dout, causal, sm_scale, layout)
    # P and dS round to 16 bits before their gemms, and each gradient once more at the end.
    for name, gradient in zip(("dq", "dk", "dv"), grads):
        value, magnitude = expected[name]
        assert_close(to_numpy(gradient, dtype), value, dtype, scale=magnitude, what=name)


def test_autograd_matches_flash_attention_backward(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    q, k, v, dout = (torch.from_numpy(rand((1, 50, 2, 64), "float16", rng)) for _ in range(4))
    if torch.cuda.is_available():
        q, k, v, dout = (x.cuda() for x in (q, k, v, dout))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    ops.flash_attention(*leaves, causal=True).backward(dout)
    out, lse = ops.flash_attention(q, k, v, causal=True, return_lse=True)
    expected = ops.flash_attention_backward(q, k, v, out, lse, dout, causal=True)
    for leaf, gradient in zip(leaves, expected):
        assert torch.equal(leaf.grad, gradient)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_flash_attention_varlen(causal, dtype, rng):
    # Lengths over, under and at the 64-row blocks, a sequence of one query, one with no keys
    # (its rows are 0, their LSE -inf) and one with no queries.
    lengths_q, lengths_k = [37, 1, 130, 64, 5, 0], [50, 20, 100, 64, 0, 7]
    heads, heads_kv, dim = 4, 2, 64
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32) for n in (lengths_q, lengths_k))
    q = rand((cu_q[-1], heads, dim), dtype, rng)
    k, v = (rand((cu_k[-1], heads_kv, dim), dtype, rng) for _ in range(2))
    out, lse = ops.flash_attention_varlen(*on_target(q, k, v, cu_q, cu_k), max(lengths_q), causal=causal,
                                          return_lse=True)
    out = to_numpy(out, dtype)
    lse = lse.cpu().numpy() if hasattr(lse, "cpu") else lse
    for b in range(len(lengths_q)):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if lengths_q[b] == 0:
            continue
        if lengths_k[b] == 0:
            assert not np.any(out[rows].astype(np.float32)) and np.all(lse[:, rows] == -np.inf)
            continue
        expected, magnitude, expected_lse = attention_reference(q[None, rows], k[None, keys], v[None, keys], causal,
                                                                 1 / np.sqrt(dim), "bshd")
        assert_close(out[None, rows], expected, dtype, scale=magnitude, what=f"sequence {b}")
        assert_close(lse[None, :, rows], expected_lse, "float32", rtol=1e-4, what=f"lse of sequence {b}")


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_varlen_backward(causal, rng, dq_in_shared):
    # The forward test's sequences, then rows of q and keys of k that no sequence holds: their
    # outputs and gradients are 0.
    lengths_q, lengths_k = [37, 1, 130, 64, 5, 0], [50, 20, 100, 64, 0, 7]
    heads, heads_kv, dim, dtype = 4, 2, 64, "bfloat16"
    cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32) for n in (lengths_q, lengths_k))
    q, dout = (rand((cu_q[-1] + 3, heads, dim), dtype, rng) for _ in range(2))
    k, v = (rand((cu_k[-1] + 2, heads_kv, dim), dtype, rng) for _ in range(2))
    q_t, k_t, v_t, dout_t, cu_q_t, cu_k_t = on_target(q, k, v, dout, cu_q, cu_k)
    out, lse = ops.flash_attention_varlen(q_t, k_t, v_t, cu_q_t, cu_k_t, max(lengths_q), causal=causal, return_lse=True)
    grads = ops.flash_attention_varlen_backward(q_t, k_t, v_t, out, lse, dout_t, cu_q_t, cu_k_t, max(lengths_q),
                                                causal=causal)
    dq, dk, dv = (to_numpy(g, dtype) for g in grads)
    zero = {name: not np.any(g.astype(np.float32)) for name, g in (
        ("out", to_numpy(out, dtype)[cu_q[-1]:]), ("dq", dq[cu_q[-1]:]), ("dk", dk[cu_k[-1]:]), ("dv", dv[cu_k[-1]:]))}
    assert all(zero.values()), zero
    assert np.all(to_numpy(lse, "float32")[:, cu_q[-1]:] == -np.inf)
    # max_seqlen_k sizes the grid only: the bound offsets on a GPU get (total_kv) gives the same
    for max_seqlen_k in (max(lengths_k), k.shape[0]):
        bounded = ops.flash_attention_varlen_backward(q_t, k_t, v_t, out, lse, dout_t, cu_q_t, cu_k_t, max(lengths_q),
                                                      causal=causal, max_seqlen_k=max_seqlen_k)
        for name, first, second in zip(("dq", "dk", "dv"), grads, bounded):
            first, second = to_numpy(first, dtype), to_numpy(second, dtype)
            if name == "dq":  # summed by atomics, in no fixed order on a GPU
                assert_close(second, first.astype(np.float64), dtype, scale=np.abs(first).max(), what=name)
            else:
                np.testing.assert_array_equal(second, first, err_msg=name)
    for b in range(len(lengths_q)):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if lengths_q[b] == 0 or lengths_k[b] == 0:  # no query sees a key: nothing flows back
            assert not any(np.any(g.astype(np.float32)) for g in (dq[rows], dk[keys], dv[keys]))
            continue
        expected = gradients_reference(q[None, rows], k[None, keys], v[None, keys], dout[None, rows], causal,
                                       1 / np.sqrt(dim), "bshd")
        for name, gradient in (("dq", dq[rows]), ("dk", dk[keys]), ("dv", dv[keys])):
            value, magnitude = expected[name]
            assert_close(gradient[None], value, dtype, scale=magnitude, what=f"{name} of sequence {b}")


def test_one_varlen_build_serves_every_packing(rng):
    """The varlen kernels read the packing (token counts, sequence count, longest sequences) at
    the call: once a forward and backward have run, other packings compile nothing."""
    heads, heads_kv, dim, dtype = 4, 2, 64, "bfloat16"

    def step(lengths_q, lengths_k):
        cu_q, cu_k = (np.concatenate([[0], np.cumsum(n)]).astype(np.int32) for n in (lengths_q, lengths_k))
        q, dout = (rand((cu_q[-1], heads, dim), dtype, rng) for _ in range(2))
        k, v = (rand((cu_k[-1], heads_kv, dim), dtype, rng) for _ in range(2))
        q, k, v, dout, cu_q, cu_k = on_target(q, k, v, dout, cu_q, cu_k)
        out, lse = ops.flash_attention_varlen(q, k, v, cu_q, cu_k, max(lengths_q), causal=True, return_lse=True)
        ops.flash_attention_varlen_backward(q, k, v, out, lse, dout, cu_q, cu_k, max(lengths_q), causal=True)

    step([37, 1], [50, 20])
    with compiled_kernels() as compiled:
        step([5, 130, 64], [7, 100, 64])
        step([200], [300])
    assert compiled == []


def test_varlen_autograd_matches_flash_attention_varlen_backward(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    cu = torch.tensor([0, 20, 50], dtype=torch.int32)
    q, k, v, dout = (torch.from_numpy(rand((50, 2, 64), "float16", rng)) for _ in range(4))
    if torch.cuda.is_available():
        q, k, v, dout, cu = (x.cuda() for x in (q, k, v, dout, cu))
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    ops.flash_attention_varlen(*leaves, cu, cu, 30, causal=True).backward(dout)
    out, lse = ops.flash_attention_varlen(q, k, v, cu, cu, 30, causal=True, return_lse=True)
    expected = ops.flash_attention_varlen_backward(q, k, v, out, lse, dout, cu, cu, 30, causal=True)
    for leaf, gradient in zip(leaves, expected):
        assert torch.equal(leaf.grad, gradient)


def test_varlen_errors_name_the_argument(rng):
    q, k = rand((10, 2, 64), "float16", rng), rand((12, 2, 64), "float16", rng)
    cu = np.array([0, 4, 10], np.int32)
    cases = [
        (dict(q=q[None], k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=6), "q must have 3 dims"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu.astype(np.int64), cu_seqlens_k=cu, max_seqlen_q=6),
         "cu_seqlens_q must be a 1-dim int32 tensor"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu[:2], max_seqlen_q=6),
         "cu_seqlens_k has 2 offsets but cu_seqlens_q has 3"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=np.array([0, 6, 4], np.int32), cu_seqlens_k=cu, max_seqlen_q=6),
         "cu_seqlens_q must start at 0, never decrease and end at most at 10"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=np.array([0, 4, 13], np.int32), max_seqlen_q=6),
         "cu_seqlens_k must start at 0, never decrease and end at most at 12"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=5),
         "max_seqlen_q must be at least the longest sequence \\(6\\), not 5"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=6, max_seqlen_k=4),
         "max_seqlen_k must be at least the longest sequence \\(6\\), not 4"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=6.0),
         "max_seqlen_q must be a positive int, not 6.0"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=True),
         "max_seqlen_q must be a positive int, not True"),
        (dict(q=q, k=k, v=k, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=6, max_seqlen_k=0),
         "max_seqlen_k must be a positive int, not 0"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            ops.flash_attention_varlen(**kwargs)


@pytest.mark.parametrize("cu_q,cu_k", [([0, 5000, 3], [0, -7, 900]), ([-100, 4, 10], [0, 4, 2**31 - 1])])
def test_varlen_kernels_given_wrong_offsets_stay_inside_their_tensors(cu_q, cu_k, rng):
    # Offsets on a GPU are not checked on the host (flash_attention_varlen): the kernels
    # themselves must keep every access inside the tensors, whatever the offsets say. dQ, which
    # the backward kernel adds into, lies inside a larger buffer whose rest must stay as it was.
    cu_q, cu_k = np.array(cu_q, np.int32), np.array(cu_k, np.int32)
    q, dout = rand((10, 2, 64), "float16", rng), rand((10, 2, 64), "float16", rng)
    k, v = rand((12, 2, 64), "float16", rng), rand((12, 2, 64), "float16", rng)
    # NumPy arrays: the CPU backend, on a machine with a GPU too
    forward, backward = (for_device_of(q, f) for f in (attention.attention_forward_varlen,
                                                        attention.attention_backward_varlen))
    out, lse = forward(2, 2, 64, True, 0.125, dtype="float16", **attention.CPU_CONFIG)(q, k, v, cu_q, cu_k, 64)
    attention._fill_past_end(out, 1, 10, 128, cu_q, "zero")
    attention._fill_past_end(lse, 2, 10, 1, cu_q, "-inf")
    around = np.full((30, 2, 64), 7.0, np.float32)
    dq = around[10:20]
    dq[:] = 0
    backward(2, 2, 64, True, 0.125, dtype="float16", **attention.CPU_CONFIG)(
        q, k, v, dout, lse, np.zeros((2, 10), np.float32), cu_q, cu_k, 12, dq)
    assert np.all(around[:10] == 7.0) and np.all(around[20:] == 7.0)


@pytest.mark.parametrize("seq_q,seq_kv,causal,layout,num_splits", [
    (1, 300, False, "bshd", 1),   # decoding: the 4 query heads of a K/V head in one block
    (5, 300, True, "bhsd", 1),    # causal per position: each position's heads share its diagonal
    (3, 300, True, "bshd", 3),    # split-KV over packed rows
    (40, 90, True, "bhsd", 1),    # 160 packed rows over several blocks, the last partial
])
def test_packed_grouped_query_attention(seq_q, seq_kv, causal, layout, num_splits, rng):
    batch, heads, heads_kv, dim, dtype = 2, 8, 2, 64, "float16"

    def shape(seq, h):
        return (batch, seq, h, dim) if layout == "bshd" else (batch, h, seq, dim)

    q = rand(shape(seq_q, heads), dtype, rng)
    k, v = (rand(shape(seq_kv, heads_kv), dtype, rng) for _ in range(2))
    q_t, k_t, v_t = on_target(q, k, v)
    kernel = attention.attention_forward_packed(batch, heads, heads_kv, seq_q, seq_kv, dim, causal, 0.125,
                                                layout=layout, dtype=dtype, num_splits=num_splits,
                                                **attention._config(q_t, dim))
    out, lse = kernel(q_t, k_t, v_t)
    if num_splits > 1:
        out, lse = attention.attention_combine(num_splits, batch, heads, seq_q, dim, layout=layout,
                                               dtype=dtype)(out, lse)
    expected, magnitude, expected_lse = attention_reference(q, k, v, causal, 0.125, layout)
    assert_close(to_numpy(out, dtype), expected, dtype, scale=magnitude)
    lse = lse.cpu().numpy() if hasattr(lse, "cpu") else lse
    assert_close(lse, expected_lse, "float32", rtol=1e-4, what="lse")


def test_short_grouped_queries_take_the_packed_kernel(rng, monkeypatch):
    calls = []
    packed = attention.attention_forward_packed

    class Spy:  # the factory, its calls recorded
        def __call__(self, *a, **kw):
            calls.append(a)
            return packed(*a, **kw)

        def __getattr__(self, name):
            return getattr(packed, name)

    monkeypatch.setattr(attention, "attention_forward_packed", Spy())
    q, k = rand((1, 2, 8, 64), "float16", rng), rand((1, 50, 2, 64), "float16", rng)
    ops.flash_attention(*on_target(q, k, k))
    assert len(calls) == 1
    ops.flash_attention(*on_target(q, k[:, :, :1].repeat(8, axis=2), k[:, :, :1].repeat(8, axis=2)))  # MHA
    assert len(calls) == 1


@pytest.mark.parametrize("batch,seq_q,seq_kv,heads,heads_kv,causal,layout,num_splits", [
    (1, 1, 700, 4, 1, False, "bshd", 4),   # decoding: one query over many keys, split 4 ways
    (2, 3, 300, 2, 2, True, "bhsd", 3),    # runs of 2, 2 and 1 key blocks
    (1, 100, 37, 2, 1, True, "bshd", 2),   # the second split's keys: none any row sees
    (1, 70, 500, 2, 2, True, "bshd", 64),  # more splits asked than key blocks: one a block
])
def test_split_kv(batch, seq_q, seq_kv, heads, heads_kv, causal, layout, num_splits, rng):
    def shape(seq, h):
        return (batch, seq, h, 64) if layout == "bshd" else (batch, h, seq, 64)

    q = rand(shape(seq_q, heads), "float16", rng)
    k, v = (rand(shape(seq_kv, heads_kv), "float16", rng) for _ in range(2))
    out, lse = ops.flash_attention(*on_target(q, k, v), causal=causal, layout=layout, return_lse=True,
                                   num_splits=num_splits)
    expected, magnitude, expected_lse = attention_reference(q, k, v, causal, 1 / 8, layout)
    assert_close(to_numpy(out, "float16"), expected, "float16", scale=magnitude)
    lse = lse.cpu().numpy() if hasattr(lse, "cpu") else lse
    assert_close(lse, expected_lse, "float32", rtol=1e-4, what="lse")


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
        (dict(q=q, k=kv, v=kv, num_splits=0), "num_splits must be an int from 1 to 64"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ops.flash_attention(**kwargs)


def tensor_core_gemms(source, arch):
    """How many gemms of a CUDA kernel's source run on tensor cores (wgmma on sm_90a, mma.sync
    before): a gemm no instruction grid fits runs on scalar FMA instead, many times slower."""
    return source.count("tilec_cuda::wgmma_gemm_" if arch == "sm_90a" else "tilec_cuda::gemm_")


SHAPE = dict(batch=2, heads=8, heads_kv=2, seq_q=1000, seq_kv=1500, sm_scale=0.1, dtype="bfloat16")


def test_backward_errors_name_the_argument(rng):
    q, k, v, out, dout = (rand((1, 16, 2, 64), "float16", rng) for _ in range(5))
    lse = np.zeros((1, 2, 16), np.float32)
    with pytest.raises(ValueError, match=r"lse must be float32 of shape \(1, 2, 16\)"):
        ops.flash_attention_backward(q, k, v, out, lse[:, :1], dout)
    with pytest.raises(ValueError, match=r"dout must have q's shape"):
        ops.flash_attention_backward(q, k, v, out, lse, rand((1, 8, 2, 64), "float16", rng))
    with pytest.raises(ValueError, match="out must be float16 like q, not bfloat16"):
        ops.flash_attention_backward(q, k, v, rand((1, 16, 2, 64), "bfloat16", rng), lse, dout)


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_CONFIGS), ("sm_80", attention.GPU_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_forward_builds_for_cuda(arch, configs, dim, causal):
    source = build_for_cuda(attention.attention_forward, arch, dim=dim, causal=causal, **SHAPE, **configs[dim])
    assert tensor_core_gemms(source, arch) == 2


@pytest.mark.parametrize("dim", attention.HOPPER_OVERLAP_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_overlapped_forward_builds_for_hopper(dim, causal):
    """FlashAttention-3's order on sm_90a: the loop's two wgmmas asynchronous and issued in one
    turn of the two consumer warpgroups, the softmax between waits for one and for both."""
    source = build_for_cuda(attention.attention_forward, "sm_90a", dim=dim, causal=causal, overlap=True, **SHAPE,
                            **attention.HOPPER_CONFIGS[dim])
    assert tensor_core_gemms(source, "sm_90a") == 4  # the first block's S, the loop's two, the last block's P V
    loop = source[source.index("turn_pass(2)"):source.index("turn_wait(2)")]
    # TakeTurn, PassTurn, Async, Clear (device/cuda/wgmma.h)
    assert re.search(r"wgmma_gemm_ss<[^>]*, 2, 0, true, (true|false)>", loop)
    assert re.search(r"wgmma_gemm_rs<[^>]*, 0, 2, true, false>", loop)
    assert loop.index("wgmma_wait<1>()") < loop.index("wgmma_wait<0>()")


@pytest.mark.parametrize("causal", [False, True])
def test_overlapped_forward_takes_its_tiles_by_tma_and_one_reciprocal_a_row(causal):
    """On sm_90a the producer loads Q, the first K block and the last V block by TMA: the
    consumers copy nothing (no cp.async, and no barrier of theirs a tile). O's rows are divided
    by one reciprocal each: a division an element is a MUFU.RCP each."""
    source = build_for_cuda(attention.attention_forward, "sm_90a", dim=128, causal=causal, overlap=True, **SHAPE,
                            **attention.HOPPER_CONFIGS[128])
    assert "cp_async" not in source
    assert re.search(r"tma_load\([^;]*V_last", source)
    assert not re.search(r"acc_o\[[^\]]*\] / denominator", source)


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_CONFIGS), ("sm_80", attention.GPU_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
def test_varlen_builds_for_cuda(arch, configs, dim):
    source = build_for_cuda(attention.attention_forward_varlen, arch, heads=8, heads_kv=2, dim=dim, causal=True,
                            sm_scale=0.1, dtype="float16", **configs[dim])
    assert tensor_core_gemms(source, arch) == 2


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_CONFIGS), ("sm_80", attention.GPU_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
@pytest.mark.parametrize("num_splits", [1, 4])
def test_packed_builds_for_cuda(arch, configs, dim, num_splits):
    source = build_for_cuda(attention.attention_forward_packed, arch, dim=dim, causal=True, num_splits=num_splits,
                            **dict(SHAPE, seq_q=3), **configs[dim])
    assert tensor_core_gemms(source, arch) == 2


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_CONFIGS), ("sm_80", attention.GPU_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
def test_split_kv_builds_for_cuda(arch, configs, dim):
    shape = dict(SHAPE, seq_q=1, seq_kv=32768)
    build_for_cuda(attention.attention_forward, arch, dim=dim, causal=True, num_splits=16, **shape, **configs[dim])
    build_for_cuda(attention.attention_combine, arch, num_splits=16, batch=2, heads=8, seq_q=1, dim=dim,
                   dtype="bfloat16")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("fill,dtype,inner", [("zero", "bfloat16", 1024), ("-inf", "float32", 1)])
def test_the_varlen_tail_fill_builds_for_cuda(arch, fill, dtype, inner):
    source = build_for_cuda(attention.fill_rows_past_end, arch, outer=8, inner=inner, fill=fill, dtype=dtype)
    # the fill's stores, or the vector's elements it stores
    stores = [line for line in source.splitlines() if line.lstrip().startswith(("X[", "X_run["))]
    assert stores and all(("0xFF800000" in line) == (fill == "-inf") for line in stores), stores


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_BACKWARD_CONFIGS),
                                          ("sm_80", attention.GPU_BACKWARD_CONFIGS)])
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_backward_builds_for_cuda(arch, configs, causal):
    source = build_for_cuda(attention.attention_backward_varlen, arch, heads=8, heads_kv=2, dim=128, causal=causal,
                            sm_scale=0.1, dtype="bfloat16", **configs[128])
    assert tensor_core_gemms(source, arch) == 5


@pytest.mark.parametrize("arch,configs", [("sm_90a", attention.HOPPER_BACKWARD_CONFIGS),
                                          ("sm_80", attention.GPU_BACKWARD_CONFIGS)])
@pytest.mark.parametrize("dim", attention.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_backward_builds_for_cuda(arch, configs, dim, causal):
    config = configs[dim]
    source = build_for_cuda(attention.attention_backward, arch, dim=dim, causal=causal, **SHAPE, **config)
    assert tensor_core_gemms(source, arch) == 5
    if config.get("dq_in_shared") and config["num_stages"] > 1:
        # Two block barriers a step: the stage's (which also ends the writes of the step before's
        # dQ share, added by TMA right after it) and dS's before the dQ gemm.
        loop = source[source.index("for (int32_t step_stage_iter"):]
        loop = loop[:loop.index("cp_async_wait_all")]
        assert loop.count("sync_threads()") == 2
        assert loop.index("sync_threads()") < loop.index("tma_reduce_add") < loop.index("wgmma_wait<1>")
    build_for_cuda(attention.attention_backward_preprocess, arch, heads=8, dim=dim, dtype="bfloat16",
                   block_M=config["block_M"], threads=config["threads"])
