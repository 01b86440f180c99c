"""Memory bandwidth of a tilec elementwise kernel against torch.

    python bench/elementwise.py [--rows 8192] [--cols 8192]

B = A * 2 + 1 on a rows x cols float16 tensor (a T.Parallel nest over a 32 x 256 tile a
block), and the same through torch (torch.mul / add_ into a preallocated output) and a
plain device-to-device copy, in one run: GB/s counting the bytes read and written, median
of 20 runs after warm-up (CUDA events). The result is checked against torch first, the
output poisoned with NaN before. Needs a CUDA GPU.
"""

import argparse
import statistics
import sys

import tilec
import tilec.language as T
from tilec import _core


@tilec.jit(target="cuda")
def scale_shift(rows, cols, block_rows=32, block_cols=256):
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "float16"), B: T.Tensor((rows, cols), "float16")):
        with T.Kernel(T.ceildiv(cols, block_cols), T.ceildiv(rows, block_rows), threads=256) as (bx, by):
            for i, j in T.Parallel(block_rows, block_cols):
                B[by * block_rows + i, bx * block_cols + j] = A[by * block_rows + i, bx * block_cols + j] * 2 + 1

    return main


def median_ms(torch, call, runs=20):
    for _ in range(3):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--cols", type=int, default=8192)
    args = parser.parse_args()
    if not _core.cuda_available():
        sys.exit(f"elementwise: needs a CUDA GPU ({_core.cuda_unavailable_reason()})")
    import torch

    a = torch.randn(args.rows, args.cols, device="cuda", dtype=torch.float16)
    b = torch.full_like(a, float("nan"))
    kernel = scale_shift(args.rows, args.cols)
    kernel(a, b)
    expected = a * 2 + 1
    if not torch.equal(b, expected):
        sys.exit("elementwise: tilec's result differs from torch's")
    moved = 2 * a.numel() * a.element_size() / 1e9  # GB read + written
    rows = [
        ("tilec B = A * 2 + 1", median_ms(torch, lambda: kernel(a, b))),
        ("torch mul + add_ (2 kernels)", median_ms(torch, lambda: torch.mul(a, 2, out=b).add_(1))),
        ("torch copy_ (B = A)", median_ms(torch, lambda: b.copy_(a))),
    ]
    print(f"{torch.cuda.get_device_name()}, {args.rows} x {args.cols} float16, median of 20 runs")
    for name, ms in rows:
        # torch's two kernels move the bytes twice.
        factor = 2 if "2 kernels" in name else 1
        print(f"{name:32s} {ms * 1e3:9.1f} us  {factor * moved / (ms / 1e3):8.1f} GB/s")


if __name__ == "__main__":
    main()
