"""The FP8 sparse decode two ways in one process: the Hopper kernel, and the crossover that
runs a token's two head blocks as a thread block cluster (sparse_mla_hopper.py), against
cuBLAS bf16 8192^3 in interleaved rounds (bench/timing.py), on bench/dsa_configs.py's shape:
b sequences (default 128), s_q = 2, h_q = 128, topk 2048 over b * 4096 random slots, every 7th
index -1. Both are checked against the float reference first, and against each other (they
compute the same sums in the same order: out and lse equal bit for bit).

    python bench/dsa_decode_crossover.py [--rounds 6] [--batch 128]
"""

import argparse
import os
import sys

import torch

from tilec.ops.dsa import sparse_mla_hopper
from tilec.ops.dsa.fp8_cache import scales_and_rope

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa import D_QK, D_V, HEADS, TOPK, fp8_cache, rel, sparse_reference  # noqa: E402
from timing import interleaved_ms  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    torch.manual_seed(0)
    s_q = 2
    slots = args.batch * 64 * 64
    cache, keys = fp8_cache(slots)
    q = torch.randn(args.batch * s_q, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    indices = torch.randint(0, slots, (args.batch * s_q, TOPK), device="cuda", dtype=torch.int32)
    indices[:, ::7] = -1
    extra = scales_and_rope(cache)
    rows = torch.randint(0, args.batch * s_q, (8,), device="cuda")
    reference = sparse_reference(q[rows], keys, indices[rows], D_QK ** -0.5)
    n = 8192
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    calls = {"cuBLAS bf16": lambda: a @ b}
    work = {"cuBLAS bf16": 2 * n ** 3}
    results = {}
    for name, crossover in [("Hopper", False), ("crossover", True)]:
        kernel = sparse_mla_hopper.sparse_mla_decode_hopper_kernel(s_q, HEADS, TOPK, D_QK ** -0.5, crossover=crossover,
                                                                   **sparse_mla_hopper.HOPPER_CONFIG)
        out, lse = kernel(q, cache, *extra, indices)
        torch.cuda.synchronize()
        results[name] = (out.clone(), lse.clone())
        print(f"{name}: error {rel(out[rows], reference):.2e} against the float reference, "
              f"finite {bool(torch.isfinite(out).all())}", flush=True)
        calls[name] = lambda kernel=kernel: kernel(q, cache, *extra, indices)
        work[name] = 2 * (D_QK + D_V) * HEADS * args.batch * s_q * TOPK
    (out_h, lse_h), (out_c, lse_c) = results["Hopper"], results["crossover"]
    print(f"crossover against Hopper: out equal {bool(torch.equal(out_h, out_c))}, "
          f"lse equal {bool(torch.equal(lse_h, lse_c))}", flush=True)
    times = interleaved_ms(calls, args.rounds)
    for r in range(args.rounds):
        rate = {name: work[name] / times[name][r] * 1e-9 for name in work}
        anchor = rate["cuBLAS bf16"]
        print(f"round {r}: " + "  ".join(f"{name} {value:.0f} TFLOP/s" +
                                         ("" if name == "cuBLAS bf16" else f" ({value / anchor:.3f}x)")
                                         for name, value in rate.items()), flush=True)


if __name__ == "__main__":
    main()
