"""DeepSeek Sparse Attention: tilec.ops.dsa's kernels against torch's straightforward way and the
GPU's ceilings, and the whole prefill step against dense attention, in one run (issue 15).

    python bench/dsa.py [--quick] [--append bench/RESULTS.md]

First run 2026-12-03 on the H200: bench/RESULTS.md, "twenty-fourth session".

The ceilings are measured in the same run: a copy's bandwidth, and cuBLAS's bf16 and fp8 GEMM
rates at 8192^3. The rows, DeepSeek-V3.2's dims:
- act_quant of [4096, 7168] bf16: TB/s against the copy;
- the indexer (H = 64, D = 128), causal, S = S_kv = 4096: TFLOP/s counting 2 H D a visible
  (query, key) pair, against cuBLAS fp8 and torch (einsum over the dequantized values);
- top-k of [4096, 131072] float32, k = 2048: ms, against torch.topk (bench/dsa_configs.py
  --only fused times the fused path, top-k from the indexer's histogram);
- sparse MLA prefill (h_q = 128, d_qk = 576, d_v = 512, topk = 2048, S = 4096, S_kv = 8192):
  TFLOP/s counting 2 (576 + 512) h_q a valid index, against cuBLAS bf16 and torch (gather, then
  a batched matmul a chunk of tokens);
- FP8 sparse decode (b = 128, s_q = 2, h_q = 128, topk = 2048): TFLOP/s against cuBLAS bf16;
- the whole prefill step (4096 queries, the last of S_kv tokens, S_kv 8K, 32K, 128K; --quick:
  8K): ms and peak memory above the inputs, against dense attention of the same dims at cuBLAS's
  bf16 rate (its FLOPs over that rate), and against SDPA where torch can run it.
Each tilec result is first checked on fresh random inputs against a reference (a few rows of
each), and a row that fails says why.
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

from tilec.ops import dsa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots import append_results  # noqa: E402
from timing import time_ms  # noqa: E402

FP8 = torch.float8_e4m3fn
H, D, HEADS, D_QK, D_V, TOPK = 64, 128, 128, 576, 512, 2048


def fp8(shape):
    return (torch.rand(shape, device="cuda") * 4 - 2).to(FP8)


def ceilings():
    """copy TB/s, cuBLAS bf16 and fp8 TFLOP/s, measured now."""
    source = torch.randn(1 << 28, device="cuda")  # 1 GiB
    target = torch.empty_like(source)
    copy_tbs = 2 * source.numel() * 4 / time_ms(lambda: target.copy_(source)) * 1e-9
    n = 8192
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    bf16 = 2 * n**3 / time_ms(lambda: a @ b) * 1e-9
    a8, b8 = a.to(FP8), b.to(FP8).t()
    one = torch.ones((), device="cuda")
    fp8_rate = 2 * n**3 / time_ms(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                                           out_dtype=torch.bfloat16)) * 1e-9
    return copy_tbs, bf16, fp8_rate


def rel(out, ref):
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def act_quant_row(copy_tbs):
    x = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16)
    y, s = dsa.act_quant(x)
    error = rel(y.float() * s.repeat_interleave(128, dim=1), x)
    ms = time_ms(lambda: dsa.act_quant(x))
    tbs = (x.numel() * 3 + s.numel() * 4) / ms * 1e-9  # reads 2 bytes an element, writes 1
    return f"| act_quant [4096, 7168] | {error:.1e} | {ms:.3f} ms | {tbs:.2f} TB/s | {tbs / copy_tbs:.2f}x copy | |"


def indexer_reference(q, k, k_scale, w, ks, ke):
    scores = torch.einsum("thd,sd->tsh", q.float(), k.float())
    logits = (scores.relu() * w[:, None, :]).sum(-1) * k_scale[None, :]
    keys = torch.arange(k.shape[0], device="cuda")[None, :]
    return logits.masked_fill((keys < ks[:, None]) | (keys >= ke[:, None]), float("-inf"))


def indexer_row(fp8_rate, S=4096):
    q, k = fp8((S, H, D)), fp8((S, D))
    k_scale, w = torch.rand(S, device="cuda") + 0.5, torch.randn(S, H, device="cuda")
    ks, ke = torch.zeros(S, dtype=torch.int32, device="cuda"), torch.arange(1, S + 1, dtype=torch.int32, device="cuda")
    logits = dsa.indexer_logits(q, k, k_scale, w, ks, ke)
    rows = slice(S - 64, S)
    ref = indexer_reference(q[rows], k, k_scale, w[rows], ks[rows], ke[rows])
    finite = torch.isfinite(ref)
    if not torch.equal(torch.isfinite(logits[rows]), finite):
        raise ValueError("-inf positions differ from the reference")
    error = rel(logits[rows][finite], ref[finite])
    ms = time_ms(lambda: dsa.indexer_logits(q, k, k_scale, w, ks, ke))
    flops = 2 * H * D * S * (S + 1) / 2
    torch_ms = time_ms(lambda: indexer_reference(q, k, k_scale, w, ks, ke), warmup=1, reps=3)
    rate = flops / ms * 1e-9
    return (f"| indexer S = S_kv = {S}, causal | {error:.1e} | {ms:.3f} ms | {rate:.0f} TFLOP/s | "
            f"{rate / fp8_rate:.2f}x cuBLAS fp8 | torch {flops / torch_ms * 1e-9:.0f} TFLOP/s |")


def topk_row(rows=4096, cols=131072, k=TOPK):
    logits = torch.randn(rows, cols, device="cuda")
    indices = dsa.topk_indices(logits, k)
    ref = torch.topk(logits[:16], k).indices
    for r in range(16):
        if set(indices[r].tolist()) != set(ref[r].tolist()):
            raise ValueError(f"row {r}'s set differs from torch.topk's")
    ms = time_ms(lambda: dsa.topk_indices(logits, k))
    torch_ms = time_ms(lambda: torch.topk(logits, k))
    return f"| top-k [{rows}, {cols}], k = {k} | sets equal | {ms:.3f} ms | | | torch.topk {torch_ms:.3f} ms |"


def sparse_reference(q, keys, indices, sm_scale):
    """out of sparse attention, by gathering each token's keys (invalid ones masked)."""
    valid = (indices >= 0) & (indices < keys.shape[0])
    gathered = keys[indices.clamp(0, keys.shape[0] - 1)].float()  # [t, topk, 576]
    scores = torch.einsum("thd,tkd->thk", q.float(), gathered) * sm_scale
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    return torch.einsum("thk,tkd->thd", scores.softmax(-1), gathered[..., :D_V])


def sparse_prefill_row(bf16_rate, S=4096, S_kv=8192):
    q = torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(S_kv, 1, D_QK, device="cuda", dtype=torch.bfloat16)
    # causal: the token at S_kv - S + t sees keys up to it; topk of them at random
    visible = torch.arange(S_kv - S + 1, S_kv + 1, device="cuda")
    indices = (torch.rand(S, 1, TOPK, device="cuda") * visible[:, None, None]).int()
    out, _ = dsa.sparse_mla_prefill(q, kv, indices)
    ref = sparse_reference(q[:8], kv[:, 0], indices[:8, 0], D_QK ** -0.5)
    error = rel(out[:8], ref)
    ms = time_ms(lambda: dsa.sparse_mla_prefill(q, kv, indices))
    flops = 2 * (D_QK + D_V) * HEADS * S * TOPK
    chunk = 256
    torch_ms = time_ms(lambda: [sparse_reference(q[c:c + chunk], kv[:, 0], indices[c:c + chunk, 0], D_QK ** -0.5)
                                for c in range(0, S, chunk)], warmup=1, reps=3)
    rate = flops / ms * 1e-9
    return (f"| sparse MLA prefill S = {S}, S_kv = {S_kv}, h_q = {HEADS} | {error:.1e} | {ms:.3f} ms | "
            f"{rate:.0f} TFLOP/s | {rate / bf16_rate:.2f}x cuBLAS bf16 | torch {flops / torch_ms * 1e-9:.0f} TFLOP/s |")


def fp8_cache(slots):
    """DeepSeek's FP8 KV cache bytes for `slots` random tokens, and their dequantized keys."""
    values = fp8((slots, 512))
    scales = torch.exp2(torch.randint(-4, 4, (slots, 4), device="cuda").float())
    rope = torch.randn(slots, 64, device="cuda", dtype=torch.bfloat16)
    cache = torch.cat([values.view(torch.uint8), scales.view(torch.uint8), rope.view(torch.uint8)], dim=1)
    keys = torch.cat([(values.float() * scales.repeat_interleave(128, dim=1)).bfloat16(), rope], dim=1)
    return cache, keys


def sparse_decode_row(bf16_rate, batch=128, s_q=2, pages_per_sequence=64):
    slots = batch * pages_per_sequence * 64
    cache, keys = fp8_cache(slots)
    q = torch.randn(batch, s_q, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    indices = torch.randint(0, slots, (batch, s_q, TOPK), device="cuda", dtype=torch.int32)
    out, _ = dsa.sparse_mla_decode(q, cache.view(-1, 64, 656), indices)
    ref = sparse_reference(q[0], keys, indices[0], D_QK ** -0.5)
    error = rel(out[0], ref)
    ms = time_ms(lambda: dsa.sparse_mla_decode(q, cache.view(-1, 64, 656), indices))
    rate = 2 * (D_QK + D_V) * HEADS * batch * s_q * TOPK / ms * 1e-9
    return (f"| FP8 sparse decode b = {batch}, s_q = {s_q}, h_q = {HEADS} | {error:.1e} | {ms:.3f} ms | "
            f"{rate:.0f} TFLOP/s | {rate / bf16_rate:.2f}x cuBLAS bf16 | |")


def step_row(bf16_rate, S_kv, S=4096):
    index_q, index_k = fp8((S, H, D)), fp8((S_kv, D))
    k_scale, w = torch.rand(S_kv, device="cuda") + 0.5, torch.randn(S, H, device="cuda")
    q = torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(S_kv, 1, D_QK, device="cuda", dtype=torch.bfloat16)
    chunk = max(1, (1 << 28) // (4 * S_kv))  # 256 MiB of logits at once

    def step():
        return dsa.attention_prefill(index_q, w, index_k, k_scale, q, kv, topk=TOPK, chunk=chunk)

    step()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak_gib = (torch.cuda.max_memory_allocated() - base) / 2**30
    ms = time_ms(step, warmup=1, reps=5)
    # dense attention: every query over its visible keys (the last S of S_kv, causal)
    visible = S * (S_kv - S) + S * (S + 1) / 2
    dense_ms = 2 * (D_QK + D_V) * HEADS * visible / bf16_rate * 1e-9
    return (f"| whole prefill step, S_kv = {S_kv} | | {ms:.1f} ms | {peak_gib:.2f} GiB above inputs | "
            f"dense at cuBLAS bf16: {dense_ms:.1f} ms ({dense_ms / ms:.1f}x slower) | {sdpa_note(S, S_kv)} |")


def sdpa_note(S, S_kv):
    """Dense SDPA of the same dims (heads sharing the latent KV), causal bottom-right, where
    torch can run it: its ms and peak memory, or why not."""
    from torch.nn.attention.bias import causal_lower_right  # noqa: PLC0415

    try:
        q = torch.randn(1, HEADS, S, D_QK, device="cuda", dtype=torch.bfloat16)
        kv = torch.randn(1, 1, S_kv, D_QK, device="cuda", dtype=torch.bfloat16)
        k, v = kv.expand(1, HEADS, S_kv, D_QK), kv[..., :D_V].expand(1, HEADS, S_kv, D_V)
        mask = causal_lower_right(S, S_kv)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        torch.cuda.synchronize()
        peak_gib = (torch.cuda.max_memory_allocated() - base) / 2**30
        ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), warmup=1, reps=3)
        return f"SDPA {ms:.1f} ms, {peak_gib:.2f} GiB"
    except Exception as e:  # noqa: BLE001 (the row says why)
        torch.cuda.empty_cache()
        return f"SDPA: {type(e).__name__}: {str(e)[:60]}"


def row_or_failure(name, make):
    try:
        return make()
    except Exception as e:  # noqa: BLE001 (the row says why)
        return f"| {name} | failed: {type(e).__name__}: {str(e)[:100]} | | | | |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the whole step at S_kv = 8K only")
    parser.add_argument("--append", help="add the table to this file (bench/RESULTS.md)")
    args = parser.parse_args()
    torch.manual_seed(0)
    copy_tbs, bf16, fp8_rate = ceilings()
    lines = [f"Ceilings in this run: copy {copy_tbs:.2f} TB/s, cuBLAS bf16 {bf16:.0f} TFLOP/s, cuBLAS fp8 "
             f"{fp8_rate:.0f} TFLOP/s (8192^3).", "",
             "| kernel | error | time | rate | against the ceiling | torch |", "|---|---:|---:|---:|---:|---|"]
    rows = [("act_quant", lambda: act_quant_row(copy_tbs)), ("indexer", lambda: indexer_row(fp8_rate)),
            ("top-k", topk_row),
            ("sparse MLA prefill", lambda: sparse_prefill_row(bf16)),
            ("FP8 sparse decode", lambda: sparse_decode_row(bf16))]
    rows += [(f"whole step S_kv = {s}", lambda s=s: step_row(bf16, s))
             for s in ([8192] if args.quick else [8192, 32768, 131072])]
    for name, make in rows:
        lines.append(row_or_failure(name, make))
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    print("\n" + table)
    if args.append:
        gpu = torch.cuda.get_device_name()
        append_results(args.append, table, gpu, "dsa", ["against the ceiling"],
                       f"DSA kernels against the GPU's ceilings, {gpu}", "fraction of the ceiling (x)")


if __name__ == "__main__":
    main()
