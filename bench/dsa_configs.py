"""The DSA kernels of tilec.ops.dsa at several configs each, in one run: how the configs in
python/tilec/ops/dsa/ were chosen (bench/RESULTS.md, twenty-fifth session).

    python bench/dsa_configs.py [--only topk,indexer,prefill,decode,fused]

Rows: top-k of [4096, 131072] float32, k = 2048, by threads:candidates:unroll:guess_margin
(guess_margin 0: the row read twice; else once where the sample's bin holds the k), beside a plain
tilec kernel that reads the logits twice (the two passes' floor); the indexer (H = 64, D = 128,
causal) at S = 4096 and 32768 by
block_N:num_stages:queries:threads:blocks_per_sm[:tma[:tensor_head_sum[:multicast[:overlap]]]] (blocks
0: ptxas free; tma 1: the keys by TMA; tensor_head_sum 1: the head sums as a bf16 gemm; multicast 1:
pairs of programs share each stage's keys by TMA multicast; overlap 1: each step's gemm under the
last step's head sums; arrive_free 1: stages freed by mbarrier arrivals, no block barrier a step);
sparse MLA prefill (h_q = 128, topk = 2048, S = 4096, S_kv = 8192, one index in 7 invalid) by
block_I:num_stages, then the warp-specialized Hopper kernel and the seesaw with one and two gathering
warpgroups; the FP8 decode (b = 128, s_q = 2) by block_I:num_stages, then the Hopper kernel, its
split_dequant form (also persistent, over the GPU's SMs) and the seesaw decode with one and two
dequantizing warpgroups. Each result is checked first (top-k as sets against torch.topk, the
others against the references of bench/dsa.py), and a config that fails says why. Set TOPK, INDEXER, PREFILL or DECODE
(comma-separated configs) to try others. `fused`: the indexer then top-k as attention_prefill
runs them (4096 queries, the last of S_kv keys, S_kv 8K, 32K, 128K), top-k reading the logits
twice against top-k from the histogram the indexer makes beside them, and the indexer alone
both ways.
"""

import argparse
import os
import sys

import torch

import tilec
import tilec.language as T
from tilec.ops.dsa.indexer import indexer_logits_kernel
from tilec.ops.dsa.indexer_hopper import HOPPER_CONFIG as INDEXER_HOPPER_CONFIG, indexer_logits_hopper_kernel
from tilec.ops import dsa
from tilec.ops.dsa.sparse_mla import sparse_mla_decode_kernel, sparse_mla_prefill_kernel
from tilec.ops.dsa.fp8_cache import scales_and_rope
from tilec.ops.dsa.sparse_mla_hopper import (HOPPER_CONFIG, sparse_mla_decode_hopper_kernel,
                                             sparse_mla_prefill_hopper_kernel)
from tilec.ops.dsa.sparse_mla_seesaw import (SEESAW_CONFIG, sparse_mla_decode_seesaw_kernel,
                                             sparse_mla_prefill_seesaw_kernel)
from tilec.ops.dsa.topk import topk_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa import D, D_QK, D_V, H, HEADS, TOPK, ceilings, fp8, fp8_cache, indexer_reference, rel  # noqa: E402
from dsa import sparse_reference  # noqa: E402
from timing import time_ms  # noqa: E402


@tilec.jit(out_idx=[-1])
def read_rows(rows, cols, threads, unroll):
    # Reads each row `passes` times as top-k's passes do (a thread's `unroll` loads at once).
    @T.prim_func
    def main(L: T.Tensor((rows, cols), "float32"), passes: T.int32, Out: T.Tensor((rows, threads), "float32")):
        with T.Kernel(rows, threads=threads) as row:
            tx = T.get_thread_binding()
            values = T.alloc_local((unroll,), "float32")
            total = T.alloc_var("float32", 0)
            for p in T.serial(passes):
                for part in T.serial(cols // (threads * unroll)):
                    for u in T.unroll(unroll):
                        values[u] = L[row, (part * unroll + u) * threads + tx]
                    for u in T.unroll(unroll):
                        total = total + values[u]
            Out[row, tx] = total

    return main


def configs(name, default):
    return [tuple(int(x) for x in c.split(":")) for c in os.environ.get(name, default).split(",") if c]


def indexer_config(block_N, stages, queries, threads, blocks, tma=0, tensor_head_sum=0, multicast=0, overlap=0,
                   arrive_free=0):
    """block_N:num_stages:queries:threads:blocks_per_sm[:tma[:tensor_head_sum[:multicast[:overlap[:arrive_free]]]]]
    as the kernel's constants."""
    return dict(block_N=block_N, num_stages=stages, queries=queries, threads=threads, blocks_per_sm=blocks,
                tma=bool(tma), tensor_head_sum=bool(tensor_head_sum), multicast=bool(multicast), overlap=bool(overlap),
                arrive_free=bool(arrive_free))


def report(label, check, run, work=None, unit=""):
    try:
        verdict = check()
        ms = min(time_ms(run) for _ in range(2))
        rate = f" {work / ms * 1e-9:.0f} {unit}" if work else ""
        print(f"{label}: {verdict} {ms:.3f} ms{rate}", flush=True)
    except Exception as e:  # noqa: BLE001 (the row says why)
        print(f"{label}: failed: {type(e).__name__}: {str(e)[:200]}", flush=True)


def topk_rows(rows=4096, cols=131072, k=TOPK):
    logits = torch.randn(rows, cols, device="cuda")
    ks = torch.zeros(rows, dtype=torch.int32, device="cuda")
    ke = torch.full((rows,), cols, dtype=torch.int32, device="cuda")
    ref = torch.topk(logits[:16], k).indices
    print(f"torch.topk {time_ms(lambda: torch.topk(logits, k)):.3f} ms")
    read = read_rows(rows, cols, 512, 8)
    print(f"reading the logits (512 threads, 8 loads each): once {time_ms(lambda: read(logits, 1)):.3f} ms, "
          f"twice {time_ms(lambda: read(logits, 2)):.3f} ms")
    for threads, candidates, unroll, margin in configs("TOPK", "512:4096:8:0,512:8192:8:2,512:8192:8:1,256:4096:16:1,256:4096:8:1"):
        kernel = topk_kernel(k, threads=threads, candidates=candidates, unroll=unroll,
                             guess_margin=margin)

        def check(kernel=kernel):
            out = kernel(logits, ks, ke)
            same = all(set(out[r].tolist()) == set(ref[r].tolist()) for r in range(16))
            return "sets equal" if same else "SETS DIFFER"

        report(f"top-k threads={threads} candidates={candidates} unroll={unroll} guess_margin={margin}", check,
               lambda kernel=kernel: kernel(logits, ks, ke))


def indexer_rows(fp8_rate):
    for S in (4096, 32768):
        q, k = fp8((S, H, D)), fp8((S, D))
        k_scale, w = torch.rand(S, device="cuda") + 0.5, torch.randn(S, H, device="cuda")
        ks = torch.zeros(S, dtype=torch.int32, device="cuda")
        ke = torch.arange(1, S + 1, dtype=torch.int32, device="cuda")
        rows = slice(S - 64, S)
        ref = indexer_reference(q[rows], k, k_scale, w[rows], ks[rows], ke[rows])
        finite = torch.isfinite(ref)
        # TileLang's fp8_lighting_indexer example: 256 keys over 4 warpgroups, 3 stages
        # each built where its row is reported: a config ptxas refuses says so in its row
        makers = {" ".join(f"{k}={v}" for k, v in config.items()): (
            lambda config=config: indexer_logits_kernel(H, D, **config), q)
            for config in (indexer_config(*c) for c in configs(
                "INDEXER", "128:3:2:128:3:1,128:3:2:128:3:1:1,64:4:4:128:3:1:1,128:2:2:128:3,256:3:2:512:0"))}
        makers["warp-specialized (Hopper)"] = (lambda: indexer_logits_hopper_kernel(H, D, **INDEXER_HOPPER_CONFIG),
                                               q.reshape(S * H, D))
        for name, (make, queries) in makers.items():
            try:
                kernel = make()
            except Exception as e:  # noqa: BLE001 (the row says why)
                print(f"indexer S={S} {name}: does not build: {type(e).__name__}: {str(e)[:300]}", flush=True)
                continue

            def check(kernel=kernel, queries=queries):
                logits = kernel(queries, k, k_scale, w, ks, ke)[rows]
                if not torch.equal(torch.isfinite(logits), finite):
                    return "-INF POSITIONS DIFFER"
                return f"error {rel(logits[finite], ref[finite]):.1e}"

            report(f"indexer S={S} {name}", check, lambda kernel=kernel, queries=queries: kernel(queries, k, k_scale, w,
                                                                                                 ks, ke),
                   2 * H * D * S * (S + 1) / 2, f"TFLOP/s ({fp8_rate:.0f} cuBLAS fp8)")


def prefill_rows(bf16_rate, S=4096, S_kv=8192):
    q = torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(S_kv, 1, D_QK, device="cuda", dtype=torch.bfloat16)
    visible = torch.arange(S_kv - S + 1, S_kv + 1, device="cuda")
    indices = (torch.rand(S, TOPK, device="cuda") * visible[:, None]).int()
    indices[:, ::7] = -1
    ref = sparse_reference(q[:8], kv[:, 0], indices[:8], D_QK ** -0.5)
    valid = (indices >= 0).sum().item()
    kernels = {f"block_I={block_I} stages={stages}": sparse_mla_prefill_kernel(
        HEADS, D_V, D_QK - D_V, TOPK, D_QK ** -0.5, block_H=64, block_I=block_I, threads=256,
        num_stages=stages) for block_I, stages in configs("PREFILL", "64:1,64:2")}
    kernels["warp-specialized (Hopper)"] = sparse_mla_prefill_hopper_kernel(HEADS, D_V, D_QK - D_V, TOPK,
                                                                            D_QK ** -0.5, **HOPPER_CONFIG)
    for producers in (1, 2):
        kernels[f"seesaw, {producers} gathering warpgroup{'s' if producers > 1 else ''} (Hopper)"] = (
            sparse_mla_prefill_seesaw_kernel(HEADS, D_V, D_QK - D_V, TOPK, D_QK ** -0.5, producers=producers,
                                             **SEESAW_CONFIG))
    for name, kernel in kernels.items():
        report(f"sparse prefill {name}", lambda kernel=kernel: f"error {rel(kernel(q, kv, indices)[0][:8], ref):.1e}",
               lambda kernel=kernel: kernel(q, kv, indices), 2 * (D_QK + D_V) * HEADS * valid,
               f"TFLOP/s ({bf16_rate:.0f} cuBLAS bf16)")


def decode_rows(bf16_rate, batch=128, s_q=2):
    slots = batch * 64 * 64
    cache, keys = fp8_cache(slots)
    q = torch.randn(batch * s_q, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    indices = torch.randint(0, slots, (batch * s_q, TOPK), device="cuda", dtype=torch.int32)
    ref = sparse_reference(q[:2], keys, indices[:2], D_QK ** -0.5)
    kernels = {f"block_I={block_I} stages={stages}": (sparse_mla_decode_kernel(
        s_q, HEADS, TOPK, D_QK ** -0.5, block_H=64, block_I=block_I, threads=256,
        num_stages=stages), (cache,)) for block_I, stages in configs("DECODE", "64:1,32:2")}
    kernels["warp-specialized (Hopper)"] = (sparse_mla_decode_hopper_kernel(
        s_q, HEADS, TOPK, D_QK ** -0.5, **HOPPER_CONFIG), (cache, *scales_and_rope(cache)))
    kernels["warp-specialized, split dequantization (Hopper)"] = (sparse_mla_decode_hopper_kernel(
        s_q, HEADS, TOPK, D_QK ** -0.5, split_dequant=True, **HOPPER_CONFIG), (cache, *scales_and_rope(cache)))
    sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    kernels[f"warp-specialized, split dequantization, persistent over {sms} programs (Hopper)"] = (
        sparse_mla_decode_hopper_kernel(s_q, HEADS, TOPK, D_QK ** -0.5, split_dequant=True, programs=sms,
                                        **HOPPER_CONFIG), (cache, *scales_and_rope(cache)))
    for producers in (1, 2):
        kernels[f"seesaw, {producers} dequantizing warpgroup{'s' if producers > 1 else ''} (Hopper)"] = (
            sparse_mla_decode_seesaw_kernel(s_q, HEADS, TOPK, D_QK ** -0.5, producers=producers, **SEESAW_CONFIG),
            (cache, *scales_and_rope(cache)))
    for name, (kernel, cache_args) in kernels.items():
        report(f"FP8 decode {name}",
               lambda kernel=kernel, a=cache_args: f"error {rel(kernel(q, *a, indices)[0][:2], ref):.1e}",
               lambda kernel=kernel, a=cache_args: kernel(q, *a, indices),
               2 * (D_QK + D_V) * HEADS * batch * s_q * TOPK, f"TFLOP/s ({bf16_rate:.0f} cuBLAS bf16)")


def fused_rows(S=4096, k=TOPK):
    for S_kv in (8192, 32768, 131072):
        q, keys = fp8((S, H, D)), fp8((S_kv, D))
        k_scale, w = torch.rand(S_kv, device="cuda") + 0.5, torch.randn(S, H, device="cuda")
        ks = torch.zeros(S, dtype=torch.int32, device="cuda")
        ke = torch.arange(S_kv - S + 1, S_kv + 1, dtype=torch.int32, device="cuda")

        def two_passes():
            return dsa.topk_indices(dsa.indexer_logits(q, keys, k_scale, w, ks, ke), k, ks, ke)

        def fused():
            logits, hist = dsa.indexer_logits(q, keys, k_scale, w, ks, ke, histogram=True)
            return dsa.topk_indices(logits, k, ks, ke, histogram=hist)

        def check():
            a, b = two_passes(), fused()
            same = all(set(a[r].tolist()) == set(b[r].tolist()) for r in range(0, S, 257))
            return "sets equal" if same else "SETS DIFFER"

        report(f"S_kv={S_kv} indexer then top-k, two passes over the logits", check, two_passes)
        report(f"S_kv={S_kv} indexer then top-k from its histogram", check, fused)
        report(f"S_kv={S_kv} indexer alone", lambda: "", lambda: dsa.indexer_logits(q, keys, k_scale, w, ks, ke))
        report(f"S_kv={S_kv} indexer with the histogram", lambda: "",
               lambda: dsa.indexer_logits(q, keys, k_scale, w, ks, ke, histogram=True))
        del q, keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="topk,indexer,prefill,decode,fused", help="which kernels, comma-separated")
    only = parser.parse_args().only.split(",")
    torch.manual_seed(0)
    copy_tbs, bf16, fp8_rate = ceilings()
    print(f"ceilings: copy {copy_tbs:.2f} TB/s, cuBLAS bf16 {bf16:.0f} TFLOP/s, cuBLAS fp8 {fp8_rate:.0f} TFLOP/s")
    sections = {"topk": topk_rows, "indexer": lambda: indexer_rows(fp8_rate), "prefill": lambda: prefill_rows(bf16),
                "decode": lambda: decode_rows(bf16), "fused": fused_rows}
    for name in only:
        sections[name]()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
