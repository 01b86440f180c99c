"""Host cost of tilec.ops.flash_attention against SDPA's cuDNN backend, and what it does to a
timing that synchronizes after each call (bench/RESULTS.md, twenty-third session).

    python bench/host_cost.py

For d = 128, S in {4096, 16384, 1024}, causal and not (B * S = 64K tokens, H = 16, fp16, bhsd),
each side three rounds of: host microseconds a call (perf_counter over 20 queued calls), a
timing synchronized after each call (time_ms as it was before d818f97), and time_ms's queued
one. Prints each one's median, as TFLOP/s, and cuDNN's time over tilec's.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tilec import ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import time_ms  # noqa: E402


def synced_ms(fn, warmup=2, reps=10):
    """time_ms before d818f97: each call's events synchronized before the next call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def host_us(fn, calls=20):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    return host


def main():
    for seq in (4096, 16384, 1024):
        for causal in (False, True):
            torch.manual_seed(0)
            shape = (65536 // seq, 16, seq, 128)
            q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
            flops = 4.0 * shape[0] * 16 * seq * seq * 128 * (0.5 if causal else 1.0)

            def cudnn():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            sides = {"tilec": lambda: ops.flash_attention(q, k, v, causal=causal, layout="bhsd"), "cuDNN": cudnn}
            results = {name: {"host": [], "synced": [], "queued": []} for name in sides}
            for _ in range(3):
                for name, fn in sides.items():
                    results[name]["host"].append(host_us(fn))
                    results[name]["synced"].append(synced_ms(fn))
                    results[name]["queued"].append(time_ms(fn, warmup=2, reps=10))
            m = {name: {what: statistics.median(v) for what, v in r.items()} for name, r in results.items()}
            line = f"S={seq} d=128 causal={causal}: host us tilec {m['tilec']['host']:.0f} cuDNN {m['cuDNN']['host']:.0f}"
            for what in ("synced", "queued"):
                line += (f"; {what} TFLOP/s tilec {flops / m['tilec'][what] * 1e-9:.0f} cuDNN "
                         f"{flops / m['cuDNN'][what] * 1e-9:.0f} ratio {m['cuDNN'][what] / m['tilec'][what]:.3f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
