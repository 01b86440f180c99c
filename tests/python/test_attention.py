"""examples/flash_attention.py on the target under test, against softmax(Q K^T / sqrt(d)) V
in float64: full and causal, a sequence that fills its blocks and one that doesn't. Its
second gemm reads the probabilities from registers (test_hip.py builds it for each hip arch)."""

import numpy as np
import pytest

from helpers import assert_close, jit, rand, rng  # noqa: F401  (rng is a fixture)
from test_cuda_nvrtc import EXAMPLES, import_file

flash_attention = jit(import_file(EXAMPLES / "flash_attention.py").flash_attention.__wrapped__, out_idx=[-1])


def attention_reference(q, k, v, causal):
    """softmax(Q K^T / sqrt(d)) V per batch and head, and the sum of |terms| of each output."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    scores = np.einsum("bqhd,bkhd->bhqk", q64, k64) / np.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[1]
        scores = np.where(np.tril(np.ones((seq, seq), bool)), scores, -np.inf)
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", probs, v64), np.einsum("bhqk,bkhd->bqhd", probs, np.abs(v64))


@pytest.mark.parametrize("seq_len", [128, 200])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_example(seq_len, causal, rng):
    batch, heads, dim = 2, 2, 64
    q, k, v = (rand((batch, seq_len, heads, dim), "float16", rng) for _ in range(3))
    out = flash_attention(batch, heads, seq_len, dim, causal=causal)(q, k, v)
    expected, scale = attention_reference(q, k, v, causal)
    # The probabilities round to float16 before P V, and the output once more: both within
    # float16's tolerance of the terms' magnitude.
    assert_close(out, expected, "float16", scale=scale)
