"""How much of a sparse MLA kernel's time is fixed, not per step: the FP8 decode (b = 128 and
132, s_q = 2, h_q = 128) and the prefill (S = 4096, S_kv = 8192, h_q = 128) as tilec.ops.dsa
runs them on Hopper, each at topk 512, 1024 and 2048 (8, 16 and 32 steps of 64 keys a
program), timed interleaved beside cuBLAS bf16 8192^3 (bench/timing.py). With time = fixed +
per_step x steps, the 1024 -> 2048 difference gives per_step and `fixed` what is left at 1024:
a program's start and end (Q in, O out, filling the pipeline, the launch), times its waves.

    python bench/dsa_fixed_cost.py [--rounds 5]
"""

import argparse
import os
import statistics
import sys

import torch

from tilec.ops import dsa
from tilec.ops.dsa.sparse_mla_hopper import HOPPER_DECODE_CONFIG, sparse_mla_decode_hopper_kernel
from tilec.ops.dsa.fp8_cache import scales_and_rope

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa import D_QK, D_V, HEADS, fp8_cache  # noqa: E402
from timing import interleaved_ms  # noqa: E402

TOPKS = (512, 1024, 2048)


def decode_calls(batch, topks, s_q=2, pages=64):
    slots = batch * pages * 64
    cache, _ = fp8_cache(slots)
    q = torch.randn(batch * s_q, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    views = scales_and_rope(cache)
    calls = {}
    for topk in topks:
        indices = torch.randint(0, slots, (batch * s_q, topk), device="cuda", dtype=torch.int32)
        kernel = sparse_mla_decode_hopper_kernel(s_q, HEADS, topk, D_QK ** -0.5, **HOPPER_DECODE_CONFIG)
        calls[f"decode b = {batch}, topk {topk}"] = (
            lambda kernel=kernel, indices=indices: kernel(q, cache, *views, indices),
            2 * (D_QK + D_V) * HEADS * batch * s_q * topk)
    return calls


def prefill_calls(topks, S=4096, S_kv=8192):
    q = torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(S_kv, 1, D_QK, device="cuda", dtype=torch.bfloat16)
    calls = {}
    for topk in topks:
        indices = torch.randint(0, S_kv, (S, 1, topk), device="cuda", dtype=torch.int32)
        calls[f"prefill S = {S}, topk {topk}"] = (lambda indices=indices: dsa.sparse_mla_prefill(q, kv, indices),
                                                   2 * (D_QK + D_V) * HEADS * S * topk)
    return calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    kernels = {**decode_calls(128, TOPKS), **decode_calls(132, TOPKS[-1:]), **prefill_calls(TOPKS)}
    n = 8192
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    calls = {name: fn for name, (fn, _) in kernels.items()}
    calls["cuBLAS bf16"] = lambda: a @ b
    times = {name: statistics.median(t) for name, t in interleaved_ms(calls, args.rounds).items()}
    cublas = 2 * n ** 3 / times["cuBLAS bf16"] * 1e-9
    print(f"| kernel | ms | TFLOP/s | of cuBLAS bf16 ({cublas:.0f} TFLOP/s) |\n|---|---:|---:|---:|")
    for name, (_, flops) in kernels.items():
        rate = flops / times[name] * 1e-9
        print(f"| {name} | {times[name]:.4f} | {rate:.0f} | {rate / cublas:.3f}x |")
    for kind in ("decode b = 128", "prefill S = 4096"):
        t512, t1024, t2048 = (times[name] for name in kernels if name.startswith(kind))
        per_16_steps = t2048 - t1024
        fixed = t1024 - per_16_steps
        print(f"{kind}: 16 steps a program {per_16_steps:.4f} ms, fixed {fixed:.4f} ms ({fixed / t2048:.1%} of topk "
              f"2048's time); from topk 512 and 1024: fixed {t512 - (t1024 - t512):.4f} ms")


if __name__ == "__main__":
    main()
