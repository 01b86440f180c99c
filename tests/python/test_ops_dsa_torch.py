"""tilec.ops.dsa inside torch models, on the GPU: the custom ops (tilec.ops.dsa.torch_ops) hold
in a torch.compile(fullgraph=True) graph and their fake kernels agree with the real ones; the
whole prefill and decode steps capture into a CUDA graph and replay on new inputs."""

import numpy as np
import pytest

from tilec import _core
from tilec.ops import dsa

from helpers import rng  # noqa: F401  (a fixture)
from test_ops_dsa import fp8_cache, fp8_values, indexer_cache

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")]
torch = pytest.importorskip("torch")

S, S_KV, H, D, HEADS, D_QK, D_V, TOPK = 40, 300, 16, 32, 16, 96, 64, 24


def prefill_inputs():
    """Fresh random inputs of a small prefill step: the indexer's, then the attention's."""
    fp8 = torch.float8_e4m3fn
    return ((torch.rand(S, H, D, device="cuda") * 4 - 2).to(fp8), torch.randn(S, H, device="cuda"),
            (torch.rand(S_KV, D, device="cuda") * 4 - 2).to(fp8), torch.rand(S_KV, device="cuda") + 0.5,
            torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16),
            torch.randn(S_KV, 1, D_QK, device="cuda", dtype=torch.bfloat16))


def decode_inputs(rng):
    """Fresh random inputs of a small decoding step (2 sequences, next_n 2, 8 pages of 64)."""
    pages, B, next_n, max_pages = 8, 2, 2, 3
    index_cache, _, _ = indexer_cache(pages, D, rng)
    kv_cache, _ = fp8_cache(pages, 64, rng)
    index_q = fp8_values((B, next_n, H, D), rng)
    arrays = (index_q.view(np.uint8), rng.standard_normal((B * next_n, H)).astype(np.float32), index_cache,
              rng.uniform(-1, 1, (B, next_n, HEADS, 576)).astype(np.float32), kv_cache,
              rng.permutation(pages)[:B * max_pages].reshape(B, max_pages).astype(np.int32),
              np.array([150, 40], np.int32))
    tensors = [torch.from_numpy(a).cuda() for a in arrays]
    tensors[0] = tensors[0].view(torch.float8_e4m3fn)
    tensors[3] = tensors[3].to(torch.bfloat16)
    return tensors


def same_sets(a, b):
    """Whether each row of two index tensors holds the same set (top-k's order is unspecified)."""
    return all(set(x.tolist()) == set(y.tolist()) for x, y in zip(a.cpu(), b.cpu()))


def test_the_custom_ops_stay_whole_in_a_fullgraph_compile():
    from tilec.ops.dsa import torch_ops  # noqa: F401  (registers torch.ops.tilec.dsa_*)

    def step(index_q, weights, index_k, k_scale, q, kv):
        ks = torch.zeros(S, dtype=torch.int32, device=q.device)
        ke = torch.arange(S_KV - S + 1, S_KV + 1, dtype=torch.int32, device=q.device)
        logits = torch.ops.tilec.dsa_indexer_logits(index_q, index_k, k_scale, weights, ks, ke)
        indices = torch.ops.tilec.dsa_topk_indices(logits, TOPK, ks, ke)
        out, lse = torch.ops.tilec.dsa_sparse_mla_prefill(q, kv, indices.unsqueeze(1), None, D_V)
        return out, lse, indices

    inputs = prefill_inputs()
    out, lse, indices = step(*inputs)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")  # a graph break raises
    c_out, c_lse, c_indices = compiled(*inputs)
    assert same_sets(c_indices, indices)
    torch.testing.assert_close(c_lse, lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(c_out.float(), out.float(), rtol=1e-2, atol=1e-2)


def test_the_fake_kernels_give_the_real_outputs_shapes_and_types(rng):
    from tilec.ops.dsa import torch_ops  # noqa: F401

    index_q, weights, index_k, k_scale, q, kv = prefill_inputs()
    ks = torch.zeros(S, dtype=torch.int32, device="cuda")
    ke = torch.full((S,), S_KV, dtype=torch.int32, device="cuda")
    logits = dsa.indexer_logits(index_q, index_k, k_scale, weights, ks, ke)
    indices = dsa.topk_indices(logits, TOPK).unsqueeze(1)
    decode = decode_inputs(rng)
    calls = [(torch.ops.tilec.dsa_act_quant, (torch.randn(4, 256, device="cuda", dtype=torch.bfloat16),)),
             (torch.ops.tilec.dsa_indexer_logits, (index_q, index_k, k_scale, weights, ks, ke, 50)),
             (torch.ops.tilec.dsa_indexer_decode_logits, (decode[0], decode[2], decode[1], decode[5], decode[6])),
             (torch.ops.tilec.dsa_topk_indices, (logits, TOPK, ks, ke)),
             (torch.ops.tilec.dsa_sparse_mla_prefill, (q, kv, indices, None, D_V)),
             (torch.ops.tilec.dsa_attention_prefill, (index_q, weights, index_k, k_scale, q, kv, None, None, TOPK,
                                                      None, D_V)),
             (torch.ops.tilec.dsa_attention_decode, (*decode, TOPK))]
    for op, args in calls:  # (opcheck's test_schema can't compare float8 inputs: torch has no mul for them)
        torch.library.opcheck(op, args, test_utils="test_faketensor")


def replayed_and_eager(step, make_inputs):
    """step's outputs from a CUDA graph captured on one set of inputs and replayed on fresh ones
    (copied into the captured inputs; the outputs poisoned first), and step's eager outputs on
    those fresh inputs."""
    static = [x.clone() for x in make_inputs()]
    side = torch.cuda.Stream()  # the first call builds the kernels, which a capture can't
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(*static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        replayed = step(*static)
    fresh = make_inputs()
    for s, f in zip(static, fresh):
        s.copy_(f)
    for output in replayed[:2]:  # out and lse (the indices are int32)
        output.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    return replayed, step(*fresh)


def check_step_outputs(replayed, eager):
    (out, lse, indices), (ref_out, ref_lse, ref_indices) = replayed, eager
    assert same_sets(indices, ref_indices)
    torch.testing.assert_close(lse, ref_lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.float(), ref_out.float(), rtol=1e-2, atol=1e-2)


def test_the_prefill_step_replays_from_a_cuda_graph():
    check_step_outputs(*replayed_and_eager(lambda *x: dsa.attention_prefill(*x, topk=TOPK, d_v=D_V), prefill_inputs))


def test_the_decode_step_replays_from_a_cuda_graph(rng):
    check_step_outputs(*replayed_and_eager(lambda *x: dsa.attention_decode(*x, topk=TOPK), lambda: decode_inputs(rng)))
