"""Python call overhead: a tiny tilec kernel against the same torch op.

    python bench/call_overhead.py [--calls 10000] [--n 1024] [--device cuda|cpu] [--append bench/RESULTS.md]

C = A + B on n float32 elements is so little work that a call costs what its
Python side, its argument checks and its launch cost. Each way of calling is
timed over `calls` back-to-back calls on the current stream (time.perf_counter,
synchronized before and after; the median of 5 such runs) and printed in µs per
call. --device cpu times the same on the CPU backend (torch CPU tensors): the host
side alone, with a kernel that does almost nothing. --append adds the table, with the date,
device, commit and command, and its plot (bench/plots.py) to a results file.
"""

import argparse
import os
import statistics
import sys
import time

import tilec
import tilec.language as T
from tilec import _core

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots import append_results  # noqa: E402


def _add(n, block=256):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
             C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


def microseconds_per_call(synchronize, call, calls):
    runs = []
    for _ in range(5):
        synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        synchronize()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--append", help="add the table and its plot to this results file")
    args = parser.parse_args()
    if args.device == "cuda" and not _core.cuda_available():
        sys.exit(f"call_overhead: needs a CUDA GPU ({_core.cuda_unavailable_reason()}); --device cpu times the host side")
    import torch

    a, b = torch.randn(args.n, device=args.device), torch.randn(args.n, device=args.device)
    c = torch.full_like(a, float("nan"))
    in_place = tilec.jit(_add, target=args.device)(args.n)
    allocating = tilec.jit(_add, out_idx=[-1], target=args.device)(args.n)
    synchronize = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    in_place(a, b, c)
    torch.testing.assert_close(c, a + b)
    torch.testing.assert_close(allocating(a, b), a + b)

    rows = [
        ("tilec kernel(a, b, c)", lambda: in_place(a, b, c)),
        ("torch.add(a, b, out=c)", lambda: torch.add(a, b, out=c)),
        ("tilec kernel(a, b) (allocates c)", lambda: allocating(a, b)),
        ("torch a + b", lambda: a + b),
    ]
    device = torch.cuda.get_device_name() if args.device == "cuda" else "CPU backend"
    lines = [f"{device}, torch {torch.__version__}, n = {args.n}, {args.calls} calls, median of 5 runs", "",
             "| call | µs per call |", "|---|---:|"]
    print(lines[0])
    for label, call in rows:
        call()  # warm-up
        lines.append(f"| {label} | {microseconds_per_call(synchronize, call, args.calls):.2f} |")
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    if args.append:
        append_results(args.append, table, device, f"call_overhead-{args.device}", ["µs per call"],
                       f"Call overhead, {device}", "µs per call")


if __name__ == "__main__":
    main()
