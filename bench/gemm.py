"""GEMM: tilec against torch.matmul (cuBLAS), torch._scaled_mm (cuBLAS fp8) and a Triton
GEMM, in one run on one GPU.

    python bench/gemm.py [--quick] [--ladder] [--append bench/RESULTS.md]

--ladder times bf16 8192^3 with each Hopper technique turned on in turn (pass configs).
Every run also times the tile widths below 128-byte rows beside cuBLAS: bf16 with block_K = 32
(64-byte rows, 64-byte swizzle) and float32 operands on tf32 tensor cores (cuBLAS with
torch.backends.cuda.matmul.allow_tf32 = True), with the configuration fixed, not the best of a
sweep.

Every tilec configuration is first checked against a float64 reference on fresh random
inputs with the output poisoned (relative Frobenius error under 1e-2 for 16-bit operands),
then timed with CUDA events (median of repeated runs after warm-up). Prints one table;
--append adds it to RESULTS.md with the date, GPU and commit.
"""

import argparse
import datetime
import os
import statistics
import sys

import torch

import tilec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels  # noqa: E402
import provenance  # noqa: E402
from plots import appended_plot  # noqa: E402
from timing import interleaved_ms, time_ms  # noqa: E402

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


def rel_error(out, a, b):
    ref = a.double() @ b.double()
    return ((out.double() - ref).norm() / ref.norm()).item()


# (block_M, block_N, block_K, stages, threads, T.use_swizzle panel or 0, shared epilogue). On
# Hopper the 64-wide k tiles (128-byte rows) run on TMA + wgmma with a producer warpgroup in
# persistent blocks; the shared epilogue is stmatrix + a TMA store.
CONFIGS = [
    (128, 256, 64, 4, 256, 8, False),
    (128, 256, 64, 3, 256, 8, True),
    (256, 128, 64, 4, 256, 8, False),
    (128, 128, 64, 5, 128, 8, False),
    (128, 128, 32, 4, 128, 8, False),
]
# fp8 (k tiles of 128 one-byte elements).
FP8_CONFIGS = [
    (128, 256, 128, 4, 256, 8, False),
    (128, 256, 128, 3, 256, 8, True),
    (256, 128, 128, 4, 256, 8, False),
]
# The ladder: (name, pass configs turning the later techniques off, stages, T.use_swizzle
# panel, shared epilogue).
LADDER = [
    ("mma.sync, cp.async (Ampere path)", {"tilec.wgmma": False}, 4, 0, False),
    ("wgmma, cp.async", {"tilec.tma": False}, 4, 0, False),
    ("+ TMA on mbarriers", {"tilec.warp_specialize": False}, 4, 0, False),
    ("+ warp specialization", {"tilec.setmaxnreg": False, "tilec.persistent": False}, 4, 0, False),
    ("+ setmaxnreg", {"tilec.persistent": False}, 4, 0, False),
    ("+ persistent blocks", {}, 4, 0, False),
    ("+ rasterization", {}, 4, 8, False),
    ("+ stmatrix / TMA-store epilogue", {}, 3, 8, True),
    ("(the same, one tile a block)", {"tilec.persistent": False}, 3, 8, True),
    ("(the same, C stored from shared by the threads)", {"tilec.tma_store": False}, 3, 8, True),
]


def bench_fp8(M, N, K, configs, log):
    gen = torch.Generator(device="cuda").manual_seed(M * 31 + N * 7 + K)
    a = torch.randn((M, K), device="cuda", generator=gen).to(torch.float8_e4m3fn)
    b = torch.randn((N, K), device="cuda", generator=gen).to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    ref = a.double() @ b.double().t()
    flops = 2.0 * M * N * K
    tflops = lambda ms: flops / ms / 1e9  # noqa: E731
    row = {"shape": f"{M}x{N}x{K}", "dtype": "float8_e4m3"}
    row["cublas"] = tflops(time_ms(lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                            out_dtype=torch.bfloat16)))
    best = None
    for cfg in configs:
        bm, bn, bk, stages, threads, panel, shared_epilogue = cfg
        kernel = kernels.fp8_matmul(M, N, K, block_M=bm, block_N=bn, block_K=bk, num_stages=stages,
                                    threads=threads, panel=panel, shared_epilogue=shared_epilogue)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a, b, c)
        err = ((c.double() - ref).norm() / ref.norm()).item()
        t = tflops(time_ms(lambda: kernel(a, b, c)))
        print(f"  tilec {row['shape']} fp8 cfg={cfg}: {t:.1f} TFLOP/s, rel err {err:.2e}", file=log, flush=True)
        if not err < 1e-2:
            raise SystemExit(f"tilec fp8 GEMM {row['shape']} cfg={cfg} is wrong: rel err {err}")
        if best is None or t > best[0]:
            best = (t, cfg)
    row["tilec"], row["config"] = best
    return row


def ladder(log, rounds=5):
    """Each step's kernel and cuBLAS timed in turn, `rounds` times over: the GPU's clocks drift
    over a run by more than some steps gain, so each figure is the median of its rounds."""
    M = N = K = 8192
    a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
    ref = a.double() @ b.double()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    calls = {"cuBLAS": lambda: torch.matmul(a, b)}
    for name, pass_configs, stages, panel, shared_epilogue in LADDER:
        factory = tilec.jit(kernels.matmul.__wrapped__, out_idx=[-1], pass_configs=pass_configs)
        kernel = factory(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=stages, threads=256, panel=panel,
                         shared_epilogue=shared_epilogue)
        c.fill_(float("nan"))
        kernel(a, b, c)
        err = ((c.double() - ref).norm() / ref.norm()).item()
        if not err < 1e-2:
            raise SystemExit(f"ladder step {name} is wrong: rel err {err}")
        calls[name] = lambda kernel=kernel: kernel(a, b, c)
    tflops = {name: [2.0 * M * N * K / ms / 1e9 for ms in times]
              for name, times in interleaved_ms(calls, rounds, warmup=5, reps=20).items()}
    median = {name: statistics.median(v) for name, v in tflops.items()}
    for name, v in tflops.items():
        print(f"  ladder {name}: median {median[name]:.1f} TFLOP/s (rounds: {', '.join(f'{t:.0f}' for t in v)})",
              file=log, flush=True)
    lines = ["", f"Ladder, bf16 8192^3, tiles 128 x 256 x 64, 256 threads; each step and cuBLAS timed in turn, "
             f"median of {rounds} rounds; cuBLAS {median['cuBLAS']:.1f} TFLOP/s:",
             "", "| technique | stages | T.use_swizzle | TFLOP/s | / cuBLAS |", "|---|---|---|---|---|"]
    for name, _, stages, panel, _ in LADDER:
        lines.append(f"| {name} | {stages} | {panel or 'off'} | {median[name]:.1f} | "
                     f"{median[name] / median['cuBLAS']:.2f} |")
    return lines


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
        bm, bn, bk, stages, threads, panel, shared_epilogue = cfg
        kernel = kernels.matmul(M, N, K, block_M=bm, block_N=bn, block_K=bk, dtype=dtype,
                                num_stages=stages, threads=threads, panel=panel, shared_epilogue=shared_epilogue)
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


# (name, dtype, B stored [N, K], (bM, bN, bK, stages, threads, panel)): fixed tiles whose rows are
# narrower than 128 bytes, or float32 (tf32; wgmma reads it K-major only, so B is [N, K]).
TILE_WIDTHS = [
    ("bf16, block_K = 32 (64-byte rows)", "bfloat16", False, (128, 256, 32, 4, 256, 8)),
    ("bf16, 128 x 128 x 32, one warpgroup", "bfloat16", False, (128, 128, 32, 4, 128, 8)),
    ("bf16, 64 x 64 x 32", "bfloat16", False, (64, 64, 32, 4, 128, 8)),
    ("float32 (tf32), block_K = 32, B [N, K]", "float32", True, (128, 256, 32, 3, 256, 8)),
    ("float32 (tf32), 128 x 128 x 32, B [N, K]", "float32", True, (128, 128, 32, 4, 128, 8)),
]
# tf32 keeps 10 bits of mantissa (wgmma truncates the rest): the error allowed for float32 operands.
TF32_TOLERANCE = 5e-3


def tile_widths(log, M=8192, N=8192, K=8192):
    """The TILE_WIDTHS rows, each with cuBLAS on the same operands in the same run."""
    lines = ["", f"Tile widths, {M}x{N}x{K}, fixed tiles (bM, bN, bK, stages, threads, panel); cuBLAS = "
             "torch.matmul on the same operands (float32 with allow_tf32 = True), in the same run:", "",
             "| kernel | tilec TFLOP/s | cuBLAS TFLOP/s | tilec / cuBLAS | rel err |", "|---|---|---|---|---|"]
    flops = 2.0 * M * N * K
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        for name, dtype, nt, (bm, bn, bk, stages, threads, panel) in TILE_WIDTHS:
            torch_dtype = getattr(torch, dtype)
            a = torch.randn((M, K), device="cuda", dtype=torch_dtype)
            b = torch.randn(((N, K) if nt else (K, N)), device="cuda", dtype=torch_dtype)
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch_dtype)
            kernel = kernels.matmul(M, N, K, block_M=bm, block_N=bn, block_K=bk, dtype=dtype, num_stages=stages,
                                    threads=threads, panel=panel, trans_B=nt)
            cublas = (lambda a=a, b=b: torch.matmul(a, b.t())) if nt else (lambda a=a, b=b: torch.matmul(a, b))
            kernel(a, b, c)
            err = rel_error(c, a, b.t() if nt else b)
            if not err < (TF32_TOLERANCE if dtype == "float32" else 1e-2):
                raise SystemExit(f"tilec {name} is wrong: rel err {err}")
            on_wgmma = "wgmma_gemm_ss<" in kernel.get_kernel_source()
            t = flops / time_ms(lambda: kernel(a, b, c)) / 1e9
            t_cublas = flops / time_ms(cublas) / 1e9
            print(f"  tile widths {name}: {t:.1f} TFLOP/s (cuBLAS {t_cublas:.1f}), rel err {err:.2e}, "
                  f"{'wgmma' if on_wgmma else 'NOT on wgmma'}", file=log, flush=True)
            lines.append(f"| {name}{'' if on_wgmma else ' (not on wgmma)'} | {t:.1f} | {t_cublas:.1f} | "
                         f"{t / t_cublas:.2f} | {err:.1e} |")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one config, 4096^3 and the odd shape")
    parser.add_argument("--ladder", action="store_true", help="also the per-technique ladder at bf16 8192^3")
    parser.add_argument("--append", help="append the table to this RESULTS.md")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench/gemm.py needs a CUDA GPU")
    # Square, odd (not multiples of the tiles) and LLM shapes (M = 4096 tokens; N x K of
    # DeepSeek-V3-sized projections).
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 4100, 3900),
              (4096, 7168, 7168), (4096, 18432, 7168), (4096, 7168, 16384)]
    fp8_shapes = [(8192, 8192, 8192), (4096, 7168, 7168), (4096, 18432, 7168), (4096, 7168, 16384)]
    configs, fp8_configs = CONFIGS, FP8_CONFIGS
    if args.quick:
        shapes, fp8_shapes, configs, fp8_configs = [shapes[0], shapes[2]], fp8_shapes[:1], CONFIGS[:1], FP8_CONFIGS[:1]
    rows = []
    for dtype in ("float16", "bfloat16"):
        for M, N, K in shapes:
            rows.append(bench_shape(M, N, K, dtype, configs, sys.stdout))
    for M, N, K in fp8_shapes:
        rows.append(bench_fp8(M, N, K, fp8_configs, sys.stdout))
    gpu = torch.cuda.get_device_name()
    commit = provenance.commit()
    lines = [
        f"### GEMM, {datetime.date.today()}, {gpu}, commit {commit}",
        "",
        "`python bench/gemm.py" + (" --quick" if args.quick else "") + (" --ladder" if args.ladder else "") +
        "` (TFLOP/s, median of 20 runs; cuBLAS = torch.matmul, for fp8 torch._scaled_mm with unit scales "
        "and bf16 output, measured in the same run; fp8 B is [N, K])",
        "",
        "| shape | dtype | tilec | cuBLAS | Triton | tilec / cuBLAS | tilec config (bM, bN, bK, stages, threads, panel, shared epilogue) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['dtype']} | {r['tilec']:.1f} | {r['cublas']:.1f} | "
                     f"{r.get('triton', float('nan')):.1f} | {r['tilec'] / r['cublas']:.2f} | {r['config']} |")
    lines += tile_widths(sys.stdout)
    if args.ladder:
        lines += ladder(sys.stdout)
    table = "\n".join(lines)
    print(table)
    if args.append:
        table += appended_plot(table, ["tilec", "cuBLAS", "Triton"], args.append,
                               f"gemm-{datetime.date.today()}-{commit}", f"GEMM, {gpu}", "TFLOP/s")
        with open(args.append, "a") as f:
            f.write("\n" + table + "\n")


if __name__ == "__main__":
    main()
