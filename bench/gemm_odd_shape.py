"""The odd GEMM shape of bench/gemm.py (4000 x 4100 x 3900: no dim a multiple of the tiles, rows
of 7800 and 8200 bytes, so no TMA and 8-byte cp.async) for each tile config, on wgmma and with
the pass config tilec.wgmma off (mma.sync), beside cuBLAS in the same run.

    python bench/gemm_odd_shape.py [--dtype bfloat16]
"""

import argparse
import os
import sys

import torch

import tilec
from tilec.ops.gemm import matmul

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm import rel_error, time_ms  # noqa: E402

M, N, K = 4000, 4100, 3900
# (block_M, block_N, block_K, stages, threads, T.use_swizzle panel)
CONFIGS = [(128, 128, 32, 4, 128, 8), (128, 128, 64, 3, 128, 8), (128, 128, 64, 5, 128, 8),
           (128, 256, 64, 3, 256, 8), (256, 128, 64, 4, 256, 8), (128, 256, 32, 4, 256, 8),
           (64, 128, 32, 4, 128, 8)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench/gemm_odd_shape.py needs a CUDA GPU")
    dtype = getattr(torch, args.dtype)
    a = torch.randn((M, K), device="cuda", dtype=dtype)
    b = torch.randn((K, N), device="cuda", dtype=dtype)
    flops = 2.0 * M * N * K
    cublas = flops / time_ms(lambda: torch.matmul(a, b)) / 1e9
    print(f"{M}x{N}x{K} {args.dtype}, TFLOP/s (median of 20 runs); cuBLAS (torch.matmul) {cublas:.1f} in the same run\n")
    print("| config (bM, bN, bK, stages, threads, panel) | tilec (wgmma) | / cuBLAS | tilec, tilec.wgmma off (mma.sync) | / cuBLAS | rel err |")
    print("|---|---|---|---|---|---|")
    for bm, bn, bk, stages, threads, panel in CONFIGS:
        row, errors = [], []
        for pass_configs in ({}, {"tilec.wgmma": False}):
            kernel = tilec.jit(matmul.__wrapped__, out_idx=[-1], pass_configs=pass_configs)(
                M, N, K, block_M=bm, block_N=bn, block_K=bk, dtype=args.dtype, num_stages=stages, threads=threads,
                panel=panel)
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
            kernel(a, b, c)
            errors.append(rel_error(c, a, b))
            row.append(flops / time_ms(lambda: kernel(a, b, c)) / 1e9)
        print(f"| {(bm, bn, bk, stages, threads, panel)} | {row[0]:.1f} | {row[0] / cublas:.2f} | {row[1]:.1f} | "
              f"{row[1] / cublas:.2f} | {max(errors):.1e} |", flush=True)


if __name__ == "__main__":
    main()
