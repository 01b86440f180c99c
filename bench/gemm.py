"""GEMM: tilec against torch.matmul (cuBLAS) and a Triton GEMM, in one run on one GPU.

    python bench/gemm.py [--quick] [--append bench/RESULTS.md]

Every tilec configuration is first checked against a float64 reference on fresh random
inputs with the output poisoned (relative Frobenius error under 1e-2 for 16-bit operands),
then timed with CUDA events (median of repeated runs after warm-up). Prints one table;
--append adds it to RESULTS.md with the date, GPU and commit.
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402

try:
    import triton
    import triton.language as tl
except ImportError:  # the table then says so
    triton = None


if triton is not None:

    @triton.jit
    def _triton_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP: tl.constexpr):
        pid = tl.program_id(0)
        grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = pid // (GROUP * grid_n)
        first_m = group * GROUP
        rows = min(grid_m - first_m, GROUP)
        pid_m = first_m + (pid % (GROUP * grid_n)) % rows
        pid_n = (pid % (GROUP * grid_n)) // rows
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            kk = k * BK + rk
            x = tl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            y = tl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    def triton_matmul(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
        _triton_matmul[grid](a, b, c, M, N, K, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
        return c


def time_ms(fn, warmup=5, reps=20):
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


def rel_error(out, a, b):
    ref = a.double() @ b.double()
    return ((out.double() - ref).norm() / ref.norm()).item()


# (block_M, block_N, block_K, num_stages, threads)
# (block_M, block_N, block_K, stages, threads, T.use_swizzle panel or 0)
CONFIGS = [
    (128, 128, 32, 4, 128, 0),
    (128, 128, 32, 4, 128, 8),
    (128, 128, 32, 3, 128, 0),
    (128, 128, 32, 5, 128, 0),
    (128, 128, 64, 3, 128, 0),
    (128, 128, 64, 3, 128, 8),
    (128, 256, 64, 3, 256, 0),
]


def bench_shape(M, N, K, dtype, configs, log):
    torch_dtype = getattr(torch, dtype)
    gen = torch.Generator(device="cuda").manual_seed(M * 31 + N * 7 + K)
    a = torch.randn((M, K), device="cuda", dtype=torch_dtype, generator=gen)
    b = torch.randn((K, N), device="cuda", dtype=torch_dtype, generator=gen)
    flops = 2.0 * M * N * K
    tflops = lambda ms: flops / ms / 1e9  # noqa: E731
    row = {"shape": f"{M}x{N}x{K}", "dtype": dtype}
    row["cublas"] = tflops(time_ms(lambda: torch.matmul(a, b)))
    if triton is not None:
        err = rel_error(triton_matmul(a, b), a, b)
        row["triton"] = tflops(time_ms(lambda: triton_matmul(a, b))) if err < 1e-2 else float("nan")
    best = None
    for cfg in configs:
        bm, bn, bk, stages, threads, panel = cfg
        kernel = kernels.matmul(M, N, K, block_M=bm, block_N=bn, block_K=bk, dtype=dtype,
                                num_stages=stages, threads=threads, panel=panel)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch_dtype)
        kernel(a, b, c)
        err = rel_error(c, a, b)
        t = tflops(time_ms(lambda: kernel(a, b, c)))
        print(f"  tilec {row['shape']} {dtype} cfg={cfg}: {t:.1f} TFLOP/s, rel err {err:.2e}, "
              f"compile {kernel.compile_seconds * 1e3:.0f} ms", file=log, flush=True)
        if not err < 1e-2:
            raise SystemExit(f"tilec GEMM {row['shape']} {dtype} cfg={cfg} is wrong: rel err {err}")
        if best is None or t > best[0]:
            best = (t, cfg)
    row["tilec"], row["config"] = best
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one config, 4096^3 and the odd shape")
    parser.add_argument("--append", help="append the table to this RESULTS.md")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench/gemm.py needs a CUDA GPU")
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 4100, 3900)]
    configs = CONFIGS
    if args.quick:
        shapes, configs = [shapes[0], shapes[2]], CONFIGS[:1]
    rows = []
    for dtype in ("float16", "bfloat16"):
        for M, N, K in shapes:
            rows.append(bench_shape(M, N, K, dtype, configs, sys.stdout))
    gpu = torch.cuda.get_device_name()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    lines = [
        f"### GEMM, {datetime.date.today()}, {gpu}, commit {commit}",
        "",
        "`python bench/gemm.py" + (" --quick" if args.quick else "") + "` (TFLOP/s, median of 20 runs; "
        "cuBLAS = torch.matmul, measured in the same run)",
        "",
        "| shape | dtype | tilec | cuBLAS | Triton | tilec / cuBLAS | tilec config (bM, bN, bK, stages, threads, panel) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['dtype']} | {r['tilec']:.1f} | {r['cublas']:.1f} | "
                     f"{r.get('triton', float('nan')):.1f} | {r['tilec'] / r['cublas']:.2f} | {r['config']} |")
    table = "\n".join(lines)
    print(table)
    if args.append:
        with open(args.append, "a") as f:
            f.write("\n" + table + "\n")


if __name__ == "__main__":
    main()
