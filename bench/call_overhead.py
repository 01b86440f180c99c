"""Python call overhead: a tiny tilec kernel against the same torch op.

    python bench/call_overhead.py [--calls 10000] [--n 1024]

C = A + B on n float32 elements is so little work that a call costs what its
Python side, its argument checks and its launch cost. Each way of calling is
timed over `calls` back-to-back calls on the current stream (time.perf_counter,
synchronized before and after; the median of 5 such runs) and printed in µs per
call. Needs a CUDA GPU.
"""

import argparse
import statistics
import sys
import time

import tilec
import tilec.language as T
from tilec import _core


def _add(n, block=256):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
             C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


add = tilec.jit(_add, target="cuda")
add_allocating = tilec.jit(_add, out_idx=[-1], target="cuda")


def microseconds_per_call(torch, call, calls):
    runs = []
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--n", type=int, default=1024)
    args = parser.parse_args()
    if not _core.cuda_available():
        sys.exit(f"call_overhead: needs a CUDA GPU ({_core.cuda_unavailable_reason()})")
    import torch

    a, b = torch.randn(args.n, device="cuda"), torch.randn(args.n, device="cuda")
    c = torch.full_like(a, float("nan"))
    in_place, allocating = add(args.n), add_allocating(args.n)
    in_place(a, b, c)
    torch.testing.assert_close(c, a + b)
    torch.testing.assert_close(allocating(a, b), a + b)

    rows = [
        ("tilec kernel(a, b, c)", lambda: in_place(a, b, c)),
        ("torch.add(a, b, out=c)", lambda: torch.add(a, b, out=c)),
        ("tilec kernel(a, b) (allocates c)", lambda: allocating(a, b)),
        ("torch a + b", lambda: a + b),
    ]
    print(f"{torch.cuda.get_device_name()}, n = {args.n}, {args.calls} calls, median of 5 runs")
    width = max(len(label) for label, _ in rows)
    for label, call in rows:
        call()  # warm-up
        print(f"{label:<{width}}  {microseconds_per_call(torch, call, args.calls):7.2f} µs/call")


if __name__ == "__main__":
    main()
