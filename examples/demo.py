"""A tour of tilec: the seed's two kernels as written, then the lazy style with
out_idx, the eager style, and symbolic dims on two sizes. Each result is
checked against NumPy; a table gives compile and run times.

    python examples/demo.py

Kernels compile for the GPU when one is usable (target "auto"), else for the
CPU. Cold compile times use a fresh, empty TILEC_CACHE_DIR (a temporary
directory, removed at the end); warm ones come from a second process
compiling the same kernels against that cache.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

import tilec
import tilec.language as T
from tilec.jit import resolve_target

from seed_dsa_index import dsa_index_kernel
from seed_matmul import matmul_kernel

TARGET = resolve_target("auto")
GPU = TARGET != "cpu"
RNG = np.random.default_rng()


# ------------------------------------------------------------ the tour's kernels


@tilec.jit(out_idx=[-1])
def gemm(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilec.jit
def axpy(X, Y, alpha=2.0, block=256):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y: T.Tensor((N,), "float32")
    Z = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]
    return Z


@tilec.jit(out_idx=[-1])
def row_sum(cols, block_rows=16):
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n, cols), "float32"), S: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block_rows), threads=128) as bx:
            A_frag = T.alloc_fragment((block_rows, cols), "float32")
            S_frag = T.alloc_fragment((block_rows,), "float32")
            T.copy(A[bx * block_rows, 0], A_frag)
            T.reduce_sum(A_frag, S_frag, dim=1)
            T.copy(S_frag, S[bx * block_rows])

    return main


# ------------------------------------------------------------ where tensors live


def rand(shape, dtype):
    """Fresh random values, never zero: magnitudes in [0.1, 1], either sign."""
    x = RNG.uniform(0.1, 1.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)
    return x.astype(dtype)


def on_device(x):
    if not GPU:
        return x
    import torch

    return torch.from_numpy(x).cuda()


def poisoned(shape, dtype):
    """An output whose every unwritten element shows (NaN)."""
    return on_device(np.full(shape, np.nan, dtype=dtype))


def on_host(x):
    return x if isinstance(x, np.ndarray) else x.cpu().numpy()


def synchronize():
    if GPU:
        import torch

        torch.cuda.synchronize()


# ------------------------------------------------------------ cases
#
# A case is (compile, runs): compile() returns a Kernel; each run is
# (label, run(kernel) -> output, float64 reference, tolerance).


def seed_matmul_reference(a, b, block=32):
    """What the seed's matmul_kernel computes: C's block (by, bx) accumulates
    A[by*32 block row, k*32 block col] @ B[bx*32 block row, k*32 block col]
    over k (it copies B[bx*32, k*32] into B_shared). Square sizes only."""
    n = a.shape[0]
    a4 = a.astype(np.float64).reshape(n // block, block, n // block, block)  # by, i, k, j
    b4 = b.astype(np.float64).reshape(n // block, block, n // block, block)  # bx, j, k, l
    return np.einsum("yikj,xjkl->yixl", a4, b4).reshape(n, n)


def seed_matmul_case():
    n = 1024 if GPU else 256
    a, b = rand((n, n), np.float32), rand((n, n), np.float32)

    def run(kernel):
        c = poisoned((n, n), np.float32)
        kernel(on_device(a), on_device(b), c)
        return c

    return (lambda: matmul_kernel(n, n, n),
            [(f"seed matmul_kernel {n}x{n}x{n}", run, seed_matmul_reference(a, b), 1e-5)])


def seed_dsa_index_case():
    h, d = 16, 64
    b, m, n = (4, 128, 2048) if GPU else (2, 32, 256)
    q, k = rand((b, m, h, d), np.float16), rand((b, n, d), np.float16)
    # scores[b, m, n] = head 0 of q . k (T.gemv writes all heads; the seed stores head 0)
    reference = np.einsum("bmd,bnd->bmn", q[:, :, 0, :].astype(np.float64), k.astype(np.float64))

    def run(kernel):
        scores = poisoned((b, m, n), np.float32)
        kernel(on_device(q), on_device(k), scores)
        return scores

    return (lambda: dsa_index_kernel(h, d),
            [(f"seed dsa_index_kernel h={h} d={d} (b,m,n)=({b},{m},{n})", run, reference, 1e-5)])


def gemm_case():
    n = 1024 if GPU else 256
    a, b = rand((n, n), np.float16), rand((n, n), np.float16)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    run = lambda kernel: kernel(on_device(a), on_device(b))  # noqa: E731 - C is allocated
    return lambda: gemm(n, n, n), [(f"lazy gemm fp16 {n}x{n}x{n}, out_idx=[-1]", run, reference, 2e-3)]


def axpy_case():
    n = 1 << 20 if GPU else 1 << 16
    x, y = rand(n, np.float32), rand(n, np.float32)
    reference = 2.0 * x.astype(np.float64) + y.astype(np.float64)

    # The run is the eager call itself (arguments matched to params by name); it
    # finds its kernel in axpy's cache after the first call, which compiles it
    # again from the disk cache (a call's constants differ from compile's N=n).
    run = lambda kernel: axpy(on_device(x), on_device(y))  # noqa: E731
    return lambda: axpy.compile(N=n), [(f"eager axpy n={n}", run, reference, 1e-6)]


def row_sum_case():
    cols = 64
    runs = []
    for rows in (100, 333):
        a = rand((rows, cols), np.float32)
        run = lambda kernel, a=a: kernel(on_device(a))  # noqa: E731
        runs.append((f"symbolic row_sum n={rows}, cols={cols}", run,
                     a.astype(np.float64).sum(axis=1), 1e-5))
    return lambda: row_sum(cols), runs


CASES = {
    "seed_matmul": seed_matmul_case,
    "seed_dsa_index": seed_dsa_index_case,
    "gemm": gemm_case,
    "axpy": axpy_case,
    "row_sum": row_sum_case,
}


# ------------------------------------------------------------ measuring


def timed(fn):
    synchronize()
    start = time.perf_counter()
    result = fn()
    synchronize()
    return result, time.perf_counter() - start


def median_run_seconds(run, kernel, repeats=5):
    return float(np.median([timed(lambda: run(kernel))[1] for _ in range(repeats)]))


def relative_error(actual, reference):
    """max |actual - reference| / max |reference| (NaN if anything is NaN)."""
    actual = on_host(actual).astype(np.float64)
    return float(np.max(np.abs(actual - reference)) / np.max(np.abs(reference)))


def compile_times():
    """{case: seconds} for compiling every case in this process."""
    times = {}
    for name, make_case in CASES.items():
        compile_kernel, _ = make_case()
        try:
            times[name] = timed(compile_kernel)[1]
        except Exception:  # reported by the main process, which compiled it first
            times[name] = None
    return times


def warm_compile_times(failures):
    """Compile times in a second process: every kernel is in the disk cache now."""
    done = subprocess.run([sys.executable, __file__, "--compile-times"], capture_output=True,
                          text=True, env=os.environ)
    if done.returncode != 0:
        failures.append(f"the warm compile process failed:\n{done.stderr}")
        return {}
    return json.loads(done.stdout.strip().splitlines()[-1])


@tilec.jit(target=TARGET)
def cache_setup_probe():
    @T.prim_func
    def main(A: T.Tensor((1,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    return main


def main():
    print(f"tilec {tilec.__version__}, target {TARGET}\n")
    # The first compile into an empty cache also probes the host compiler and
    # precompiles the kernel header; time it apart from the kernels' own cold compiles.
    _, setup_seconds = timed(cache_setup_probe)
    print(f"first compile into an empty cache (probes the compiler, precompiles the kernel "
          f"header, builds a 1-line kernel): {setup_seconds * 1e3:.1f} ms\n")
    rows, failures = [], []
    cold = {}
    for name, make_case in CASES.items():
        try:
            compile_kernel, runs = make_case()
            kernel, cold[name] = timed(compile_kernel)
            for index, (label, run, reference, tolerance) in enumerate(runs):
                error = relative_error(run(kernel), reference)
                rows.append((name, index, label, median_run_seconds(run, kernel), error))
                if not error <= tolerance:
                    failures.append(f"{label}: relative error {error:.2e} > {tolerance:.0e}")
        except Exception:
            failures.append(f"{name}:\n{traceback.format_exc()}")
    warm = warm_compile_times(failures)

    header = ("kernel", "compile cold", "compile warm", "run", "max rel err")
    table = [header]
    for name, index, label, run_seconds, error in rows:
        first = index == 0  # later runs reuse the first run's kernel
        table.append((label,
                       f"{cold[name] * 1e3:.1f} ms" if first else "(same kernel)",
                       f"{warm[name] * 1e3:.1f} ms" if first and warm.get(name) else "",
                       f"{run_seconds * 1e3:.3f} ms", f"{error:.1e}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))
    print("\ncold: first compile of the kernel (not in the disk cache); warm: a second process "
          "compiling the same kernels from the disk cache; run: median of 5.")
    if failures:
        print("\nFAILED:\n" + "\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:] == ["--compile-times"]:
        print(json.dumps(compile_times()))
    else:
        with tempfile.TemporaryDirectory(prefix="tilec-demo-cache-") as cache_dir:
            os.environ["TILEC_CACHE_DIR"] = cache_dir  # the core reads it at every compile
            main()
