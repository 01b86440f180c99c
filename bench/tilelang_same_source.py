"""The same kernel source under tilelang and under tilec, side by side on one GPU (issue 13).

The device call (one line; carry [".whl", "exp/tl_same_source"], about 60 MiB with the tree):

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; unset LDFLAGS CXXFLAGS CFLAGS CPPFLAGS; cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEC_BUILD_TESTS=OFF -DPython_EXECUTABLE=$(command -v python3) > $OUT/build.log 2>&1 && cmake --build build-gpu -j16 >> $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }; PYTHONPATH=$PWD/python:/tmp/site timeout 480 python3 bench/tilelang_same_source.py exp/tl_same_source --out $OUT

What it needs there, made on the CPU machine in the repository root:
    bench/tilelang_wheels.sh .whl    # tilelang 0.1.15 and the three packages the GPU machine
                                     # lacks, repacked to fit (the script says what it drops)
    mkdir -p exp/tl_same_source/examples && cp -r /tmp/tl/examples/{gemm,flash_attention,elementwise,norm} exp/tl_same_source/examples/
    mkdir -p exp/tl_same_source/examples/deepseek_v32 && cp /tmp/tl/examples/deepseek_v32/*.py exp/tl_same_source/examples/deepseek_v32/
(/.whl/ and /exp/ are in .git/info/exclude; TileLang's whole examples/ folder, 7 MB, would
take the call past its 64 MiB.)

    python bench/tilelang_same_source.py CHECKOUT [--out DIR] [--timeout 100] [--budget 420]
        [--reps 30] [--cases SUBSTRING]

CHECKOUT is a TileLang checkout or its examples/ folder (as for bench/tilelang_conformance.py).
Each case (CASES) loads one example file and calls one of its kernels the way the example
does: under tilelang from the file as it is, under tilec from the file after the conformance
runner's import swap. Every (case, side) runs in its own process, under --timeout, with a fresh
kernel cache (TILEC_CACHE_DIR, or TILELANG_CACHE_DIR with TILELANG_DISABLE_CACHE=1, a new temp
folder each), so a crash, a hang or a compile error fills one row's cells with the error and the
other rows go on. The sides:
    tilelang   the example under tilelang (the wheels above)
    tilec      the example after the swap, under tilec
    anchor     the same work in torch: torch.matmul (cuBLAS) for a GEMM,
               F.scaled_dot_product_attention (fp16, torch's choice of backend) for attention,
               a device copy of the same bytes for a memory-bound kernel; for the DSA
               cases (`--cases dsa`: TileLang's deepseek_v32 examples), tilec.ops.dsa's own
               kernel for the same work
Compile seconds: wall time around the example's compile call (`.compile(...)`, or the call
that compiles), the first in the process. Speed: CUDA-event timing (bench/timing.py time_ms),
the median of --reps calls after warm-up, of the kernel's Python call with its output
allocation, the same for both; TFLOP/s for GEMM and attention, GB/s (bytes read + written) for
the memory-bound ones. Error: relative Frobenius error of the output against torch in float64
(float32 for attention); one over 1e-2 is named among the row's failures. The table (markdown) is printed last and written to DIR/same_source.md,
the rows also to DIR/same_source.json, each side's output to DIR/logs/, and each side's
generated kernel source (get_kernel_source(), where the kernel has it) to DIR/sources/.

--ncu NCU runs each side's process under Nsight Compute (NCU is its path, e.g. `ncu`): after
its timing, the side makes one more call between cudaProfilerStart and cudaProfilerStop, and
ncu's report of the kernels of that call (speed of light, launch, occupancy, warp states,
memory and compute workload) goes to DIR/logs/<case>.<side>.ncu.txt. ncu profiles nothing
before that call (--profile-from-start off), but the table of such a run is not one to report:
on the H200 every side, the anchor too, ran 5-40% slower in a process under ncu.
"""

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
from tilelang_conformance import _cell, _kill_group, examples_folder, swap_imports  # noqa: E402

SIDES = ["anchor", "tilelang", "tilec"]
RESULT_MARK = "SAME_SOURCE_RESULT "  # a child's one line of JSON on stdout
ERROR_LIMIT = 1e-2  # a relative error past it is named in the row's failures
MIN_SIDE_SECONDS = 15  # a side is not started with less of the budget left


# ---- the cases (run in the child processes) --------------------------------------------------

class Gemm:
    """examples/gemm/example_gemm.py's matmul with the example's blocks, fp16 in and out."""
    program, unit = "gemm/example_gemm.py", "TFLOP/s"

    def __init__(self, M, N, K):
        self.M, self.N, self.K = M, N, K
        self.name, self.shape = "gemm matmul", f"{M}x{N}x{K} fp16"
        self.work = 2.0 * M * N * K

    def inputs(self, torch):
        return (torch.randn(self.M, self.K, device="cuda", dtype=torch.float16),
                torch.randn(self.K, self.N, device="cuda", dtype=torch.float16))

    def compile(self, module, inputs):
        return module.matmul.compile(M=self.M, N=self.N, K=self.K, block_M=128, block_N=128,
                                     block_K=32)

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def reference(self, torch, inputs):
        a, b = inputs
        return a.double() @ b.double()

    def anchor(self, torch, inputs):
        return lambda: torch.matmul(*inputs)


class FlashAttention:
    """examples/flash_attention/example_mha_fwd_bhsd.py's flashattn with the config its
    run_regression_perf uses (block 128 x 128, 2 stages, 256 threads; fast math on, as the
    example's pass_configs say)."""
    program, unit = "flash_attention/example_mha_fwd_bhsd.py", "TFLOP/s"

    def __init__(self, batch, heads, seq, dim, causal):
        self.batch, self.heads, self.seq, self.dim, self.causal = batch, heads, seq, dim, causal
        self.name = "mha fwd bhsd" + (" causal" if causal else "")
        self.shape = f"B{batch} H{heads} S{seq} D{dim} fp16"
        self.work = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)

    def inputs(self, torch):
        shape = (self.batch, self.heads, self.seq, self.dim)
        return tuple(torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))

    def compile(self, module, inputs):
        return module.flashattn(self.batch, self.heads, self.seq, self.seq, self.dim, self.causal,
                                block_M=128, block_N=128, num_stages=2, threads=256)

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def reference(self, torch, inputs):
        import torch.nn.functional as F
        q, k, v = (t.float() for t in inputs)
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)

    def anchor(self, torch, inputs):
        import torch.nn.functional as F
        return lambda: F.scaled_dot_product_attention(*inputs, is_causal=self.causal)


class ElementwiseAdd:
    """examples/elementwise/example_elementwise_add.py's elementwise_add with the example's
    blocks (32 x 32, 128 threads), float32."""
    program, unit = "elementwise/example_elementwise_add.py", "GB/s"

    def __init__(self, M, N):
        self.M, self.N = M, N
        self.name, self.shape = "elementwise add", f"{M}x{N} fp32"
        self.work = 3.0 * M * N * 4

    def inputs(self, torch):
        return (torch.randn(self.M, self.N, device="cuda"),
                torch.randn(self.M, self.N, device="cuda"))

    def compile(self, module, inputs):
        return module.elementwise_add.compile(M=self.M, N=self.N, block_M=32, block_N=32,
                                              threads=128, in_dtype=module.T.float32,
                                              out_dtype=module.T.float32)

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def reference(self, torch, inputs):
        a, b = inputs
        return a.double() + b.double()

    def anchor(self, torch, inputs):
        return _copy_of(torch, self.work)


class RmsNorm:
    """examples/norm/rms_norm.py's rms_norm with the example's blk_m = 1, float32."""
    program, unit = "norm/rms_norm.py", "GB/s"

    def __init__(self, M, N):
        self.M, self.N = M, N
        self.name, self.shape = "rms_norm", f"{M}x{N} fp32"
        self.work = 2.0 * M * N * 4

    def inputs(self, torch):
        return (torch.randn(self.M, self.N, device="cuda"),)

    def compile(self, module, inputs):
        return module.rms_norm.compile(M=self.M, N=self.N, blk_m=1)

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def reference(self, torch, inputs):
        x = inputs[0].double()
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-12)

    def anchor(self, torch, inputs):
        return _copy_of(torch, self.work)


class SparseMlaForward:
    """examples/deepseek_v32/sparse_mla_fwd.py (or sparse_mla_fwd_pipelined.py, TileLang's
    warp-specialized one) through its sparse_mla_fwd_interface with the example's config, on
    DSA's prefill shape. Token t's topk indices are keys at or before it (the examples' causal
    rule), drawn with repeats, all valid. The anchor is tilec.ops.dsa.sparse_mla_prefill on the
    same tensors (its own kernel, not torch's)."""
    unit = "TFLOP/s"

    def __init__(self, S, S_kv, heads, topk, pipelined=False):
        self.S, self.S_kv, self.heads, self.topk, self.pipelined = S, S_kv, heads, topk, pipelined
        self.program = "deepseek_v32/sparse_mla_fwd" + ("_pipelined" if pipelined else "") + ".py"
        self.name = "dsa sparse mla fwd" + (" pipelined" if pipelined else "")
        self.shape = f"S{S} S_kv{S_kv} H{heads} topk{topk} bf16"
        self.work = 2.0 * (576 + 512) * heads * S * topk

    def inputs(self, torch):
        q = torch.randn(1, self.S, self.heads, 576, device="cuda", dtype=torch.bfloat16)
        kv = torch.randn(1, self.S_kv, 1, 576, device="cuda", dtype=torch.bfloat16)
        visible = torch.arange(1, self.S + 1, device="cuda")[None, :, None, None]
        indices = (torch.rand(1, self.S, 1, self.topk, device="cuda") * visible).int()
        return q, kv, indices

    def compile(self, module, inputs):
        interface = module.sparse_mla_fwd_interface
        call = (lambda q, kv, indices: interface(q, kv, indices, 0, 1)) if self.pipelined else interface
        call(*inputs)  # the example compiles on its first call
        return call

    def run(self, kernel, inputs):
        return kernel(*inputs)[0]

    def reference(self, torch, inputs):
        q, kv, indices = inputs
        keys = kv[0, :, 0].float()
        out = torch.empty(q.shape[:3] + (512,), device="cuda")
        for first in range(0, self.S, 256):
            rows = slice(first, first + 256)
            gathered = keys[indices[0, rows, 0].long()]  # [rows, topk, 576]
            scores = torch.einsum("thd,tkd->thk", q[0, rows].float(), gathered) * 576 ** -0.5
            out[0, rows] = torch.einsum("thk,tkd->thd", scores.softmax(-1), gathered[..., :512])
        return out

    def anchor(self, torch, inputs):
        from tilec.ops import dsa
        q, kv, indices = inputs
        return lambda: dsa.sparse_mla_prefill(q[0], kv[0], indices[0])


class TopkSelector:
    """examples/deepseek_v32/topk_selector.py's tl_topk over whole rows of random float32
    logits. Rate: GB/s of the logits read once. Error: the fraction of the first 64 rows whose
    set differs from torch.topk's. The anchor is tilec.ops.dsa.topk_indices."""
    program, unit = "deepseek_v32/topk_selector.py", "GB/s"

    def __init__(self, rows, cols, k):
        self.rows, self.cols, self.k = rows, cols, k
        self.name, self.shape = "dsa topk selector", f"{rows}x{cols} k{k} fp32"
        self.work = 4.0 * rows * cols

    def inputs(self, torch):
        return (torch.randn(self.rows, self.cols, device="cuda"),
                torch.zeros(self.rows, dtype=torch.int32, device="cuda"),
                torch.full((self.rows,), self.cols, dtype=torch.int32, device="cuda"))

    def compile(self, module, inputs):
        call = lambda logits, starts, ends: module.tl_topk(logits, starts, ends, self.k)  # noqa: E731
        call(*inputs)
        return call

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def error(self, torch, inputs, out):
        rows = min(self.rows, 64)
        ref = torch.topk(inputs[0][:rows], self.k).indices
        return sum(set(out[r].tolist()) != set(ref[r].tolist()) for r in range(rows)) / rows

    def anchor(self, torch, inputs):
        from tilec.ops import dsa
        logits, starts, ends = inputs
        return lambda: dsa.topk_indices(logits, self.k, starts, ends)


class LightningIndexer:
    """examples/deepseek_v32/fp8_lighting_indexer.py's mqa_attn_return_logits_interface on the
    example's shape (H 32, D 64) with causal ranges (the queries the last S of the S_kv keys) and
    key scales of 1. Error: relative, over the finite logits, against float32 (a -inf elsewhere
    that differs counts as an error of 1). The anchor is tilec.ops.dsa.indexer_logits."""
    program, unit = "deepseek_v32/fp8_lighting_indexer.py", "TFLOP/s"

    def __init__(self, S, S_kv, heads, dim):
        self.S, self.S_kv, self.heads, self.dim = S, S_kv, heads, dim
        self.name, self.shape = "dsa lightning indexer", f"S{S} S_kv{S_kv} H{heads} D{dim} fp8 causal"
        self.work = 2.0 * heads * dim * S * (S_kv - S + (S + 1) / 2)

    def inputs(self, torch):
        fp8 = torch.float8_e4m3fn
        q = torch.randn(self.S, self.heads, self.dim, device="cuda").to(fp8)
        k = torch.randn(self.S_kv, self.dim, device="cuda").to(fp8)
        scales = torch.ones(self.S_kv, device="cuda")
        weights = torch.randn(self.S, self.heads, device="cuda")
        ks = torch.zeros(self.S, dtype=torch.int32, device="cuda")
        ke = torch.arange(self.S_kv - self.S + 1, self.S_kv + 1, dtype=torch.int32, device="cuda")
        return q, k, scales, weights, ks, ke

    def compile(self, module, inputs):
        call = module.mqa_attn_return_logits_interface
        call(*inputs)
        return call

    def run(self, kernel, inputs):
        return kernel(*inputs)

    def error(self, torch, inputs, out):
        q, k, scales, weights, ks, ke = inputs
        worst = 0.0
        for first in range(0, self.S, 256):
            rows = slice(first, first + 256)
            scores = torch.einsum("thd,sd->tsh", q[rows].float(), k.float())
            ref = (scores.relu() * weights[rows, None, :]).sum(-1) * scales[None, :]
            keys = torch.arange(self.S_kv, device="cuda")[None, :]
            ref = ref.masked_fill((keys < ks[rows, None]) | (keys >= ke[rows, None]), float("-inf"))
            finite = torch.isfinite(ref)
            if not torch.equal(torch.isfinite(out[rows]), finite):
                return 1.0
            worst = max(worst, rel_error(out[rows][finite], ref[finite]))
        return worst

    def anchor(self, torch, inputs):
        from tilec.ops import dsa
        return lambda: dsa.indexer_logits(*inputs)


def _copy_of(torch, moved_bytes):
    """A device-to-device copy that reads and writes moved_bytes in all."""
    source = torch.empty(int(moved_bytes // 2), dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    return lambda: target.copy_(source)


CASES = [
    Gemm(4096, 4096, 4096),
    Gemm(8192, 8192, 8192),
    FlashAttention(4, 32, 4096, 128, causal=False),
    FlashAttention(4, 32, 4096, 128, causal=True),
    ElementwiseAdd(8192, 8192),
    RmsNorm(8192, 8192),
    # DeepSeek Sparse Attention (issue 15); --cases dsa runs these alone
    SparseMlaForward(4096, 8192, 128, 2048),
    SparseMlaForward(4096, 8192, 128, 2048, pipelined=True),
    TopkSelector(64, 32768, 2048),
    TopkSelector(4096, 131072, 2048),
    LightningIndexer(4096, 8192, 32, 64),
]


def case_id(case):
    return f"{case.name} {case.shape}"


def load_example(path, side):
    """The example file as a module: as it is for tilelang, import-swapped for tilec (the copy
    run is written to the working folder, a temporary one the parent made)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if side == "tilec":
        source, _ = swap_imports(source)
    copy = os.path.abspath(os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(source)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own helpers (deepseek_v32's utils)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rel_error(out, ref):
    out = out.to(ref.dtype)
    return ((out - ref).norm() / ref.norm()).item()


def run_side(case, side, examples, reps, sources=None, profile=False):
    """One side of one case, in this process: a dict of compile_s, rate, error. With
    `sources` (a folder), the kernel's generated source is written there; with `profile`, one
    more call runs between cudaProfilerStart and cudaProfilerStop (for ncu)."""
    import torch
    from timing import time_ms

    torch.manual_seed(0)
    inputs = case.inputs(torch)
    result = {}
    if side == "anchor":
        call = case.anchor(torch, inputs)
    else:
        module = load_example(os.path.join(examples, case.program), side)
        torch.cuda.synchronize()
        start = time.perf_counter()
        kernel = case.compile(module, inputs)
        result["compile_s"] = time.perf_counter() - start
        out = case.run(kernel, inputs)
        torch.cuda.synchronize()
        result["error"] = (case.error(torch, inputs, out) if hasattr(case, "error")
                           else rel_error(out, case.reference(torch, inputs)))
        call = lambda: case.run(kernel, inputs)  # noqa: E731
        if sources and hasattr(kernel, "get_kernel_source"):
            name = re.sub(r"[^\w.-]+", "_", f"{case_id(case)}.{side}.cu")
            with open(os.path.join(sources, name), "w", encoding="utf-8") as f:
                f.write(kernel.get_kernel_source())
    seconds = time_ms(call, warmup=5, reps=reps) * 1e-3
    result["rate"] = case.work / seconds / (1e12 if case.unit == "TFLOP/s" else 1e9)
    if profile:
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return result


def child_main(case_name, side, examples, reps, sources, profile):
    case = next(c for c in CASES if case_id(c) == case_name)
    print(RESULT_MARK + json.dumps(run_side(case, side, examples, reps, sources, profile)), flush=True)


# ---- the parent: one process per (case, side) ------------------------------------------------

def fresh_cache_env(side, folder):
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    if side == "tilec":
        env["TILEC_CACHE_DIR"] = folder
    elif side == "tilelang":
        env.update(TILELANG_CACHE_DIR=folder, TILELANG_DISABLE_CACHE="1",
                   TILELANG_AUTO_TUNING_DISABLE_CACHE="1")
    return env


def last_error(output):
    """The last exception line of a child's output (or its last line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Interrupt)\b", line):
            return line[:200]
    return lines[-1][:200] if lines else "no output"


NCU_SECTIONS = ["SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats",
                "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis"]


def spawn(case, side, examples, timeout, reps, python, sources=None, ncu=None, ncu_report=None):
    """Runs one side of one case in its own process group; (result dict, output text). With
    `sources`, the kernel's source is written into that folder; with `ncu`, the side runs under
    Nsight Compute, its report written to `ncu_report`."""
    with tempfile.TemporaryDirectory(prefix=f"same_source_{side}_") as workdir:
        command = [python, os.path.abspath(__file__), "--child", case_id(case), side,
                   "--examples", examples, "--reps", str(reps)]
        if sources:
            command += ["--sources", sources]
        if ncu:
            sections = [arg for name in NCU_SECTIONS for arg in ("--section", name)]
            command = [ncu, "--profile-from-start", "off", "--log-file", ncu_report,
                       *sections, *command, "--profile"]
        env = fresh_cache_env(side, os.path.join(workdir, "cache"))
        process = subprocess.Popen(command, cwd=workdir, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            output, _ = process.communicate()
            timed_out = True
        _kill_group(process.pid)
    text = output.decode("utf-8", errors="replace")
    marked = [line for line in text.splitlines() if line.startswith(RESULT_MARK)]
    if timed_out:
        return {"failure": f"timeout after {timeout:g} s"}, text
    if process.returncode == 0 and marked:
        return json.loads(marked[-1][len(RESULT_MARK):]), text
    return {"failure": f"exit {process.returncode}: {last_error(text)}"}, text


def _number(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator == 0:
        return "-"
    return f"{numerator / denominator:.2f}x"


def table(rows):
    """The markdown table of rows: {case, shape, unit, anchor, tilelang, tilec} where each side
    is its result dict (compile_s, rate, error, or failure)."""
    lines = [
        "| kernel | shape | tilelang compile s | tilec compile s | compile speed-up "
        "(tilelang s / tilec s) | unit | tilelang | tilec | tilec / tilelang | anchor "
        "| tilec / anchor | tilelang error | tilec error | failures |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        a, tl, tc = row["anchor"], row["tilelang"], row["tilec"]
        failures = [f"{side}: {row[side]['failure']}" for side in SIDES if "failure" in row[side]]
        failures += [f"{side}: error {row[side]['error']:.3g} is over {ERROR_LIMIT:g}"
                     for side in ("tilelang", "tilec") if row[side].get("error", 0) > ERROR_LIMIT]
        lines.append("| " + " | ".join(_cell(text) for text in [
            row["case"], row["shape"],
            _number(tl.get("compile_s"), 2), _number(tc.get("compile_s"), 2),
            _ratio(tl.get("compile_s"), tc.get("compile_s")), row["unit"],
            _number(tl.get("rate"), 1), _number(tc.get("rate"), 1),
            _ratio(tc.get("rate"), tl.get("rate")), _number(a.get("rate"), 1),
            _ratio(tc.get("rate"), a.get("rate")),
            _number(tl.get("error"), 5) if "error" in tl else "-",
            _number(tc.get("error"), 5) if "error" in tc else "-",
            "; ".join(failures),
        ]) + " |")
    return "\n".join(lines) + "\n"


def require_tilelang(python):
    """The tilelang version, or SystemExit saying how to install the wheels."""
    probe = subprocess.run([python, "-c", "import tilelang; print(tilelang.__version__)"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        raise SystemExit(
            "tilelang does not import: " + last_error(probe.stdout + probe.stderr) + "\n"
            "Install the wheels bench/tilelang_wheels.sh makes (into .whl/):\n"
            "  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir "
            "--upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site")
    return probe.stdout.strip().splitlines()[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", nargs="?",
                        help="a TileLang checkout (with examples/) or its examples/")
    parser.add_argument("--out", default="same_source_out", help="folder for the table and logs")
    parser.add_argument("--timeout", type=float, default=100.0, help="seconds per case and side")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds for the whole run; sides past it are not run")
    parser.add_argument("--reps", type=int, default=30, help="timed calls (at least 20)")
    parser.add_argument("--cases", default="", help="run only cases whose name contains this")
    parser.add_argument("--python", default=sys.executable, help="the Python of the sides")
    parser.add_argument("--ncu", default=None,
                        help="Nsight Compute's ncu: profile one call of each side (see above)")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "SIDE"), help=argparse.SUPPRESS)
    parser.add_argument("--examples", help=argparse.SUPPRESS)
    parser.add_argument("--sources", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.reps < 20:
        parser.error("--reps must be at least 20")
    if args.child:
        return child_main(args.child[0], args.child[1], args.examples, args.reps, args.sources,
                          args.profile)
    if args.checkout is None:
        parser.error("the TileLang checkout is required")
    if args.timeout <= 0 or args.budget <= 0:
        parser.error("--timeout and --budget must be positive")
    examples = os.path.abspath(examples_folder(args.checkout))
    cases = [c for c in CASES if args.cases in case_id(c)]
    if not cases:
        parser.error(f"no case matches {args.cases!r} (cases: "
                     f"{', '.join(case_id(c) for c in CASES)})")
    missing = sorted({c.program for c in cases
                      if not os.path.isfile(os.path.join(examples, c.program))})
    if missing:
        raise SystemExit(f"{examples}: missing {', '.join(missing)}")
    started = time.monotonic()
    version = require_tilelang(args.python)
    print(f"tilelang {version}; {len(cases)} cases x {len(SIDES)} sides, "
          f"timeout {args.timeout:g} s each", flush=True)

    for folder in ("logs", "sources"):
        os.makedirs(os.path.join(args.out, folder), exist_ok=True)
    sources = os.path.abspath(os.path.join(args.out, "sources"))
    rows = []
    for case in cases:
        row = {"case": case.name, "shape": case.shape, "unit": case.unit,
               "program": case.program}
        for side in SIDES:
            start = time.monotonic()
            left = args.budget - (start - started)
            if left < MIN_SIDE_SECONDS:
                row[side] = {"failure": f"not run: the {args.budget:g} s budget was spent"}
                continue
            name = re.sub(r"[^\w.-]+", "_", f"{case_id(case)}.{side}.log")
            report = os.path.abspath(os.path.join(args.out, "logs", name[:-4] + ".ncu.txt"))
            row[side], output = spawn(case, side, examples, min(args.timeout, left), args.reps,
                                      args.python, sources, args.ncu, report)
            with open(os.path.join(args.out, "logs", name), "w", encoding="utf-8") as f:
                f.write(output)
            print(f"  {case_id(case):40} {side:8} {time.monotonic() - start:6.1f} s  "
                  f"{row[side].get('failure', 'ok')}", flush=True)
        rows.append(row)
    header = (f"Same source, tilelang {version} against tilec, one run "
              f"(median of {args.reps} timed calls)\n\n")
    text = header + table(rows)
    with open(os.path.join(args.out, "same_source.md"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(args.out, "same_source.json"), "w", encoding="utf-8") as f:
        json.dump({"tilelang": version, "reps": args.reps, "rows": rows}, f, indent=1)
    print("\n" + text)


if __name__ == "__main__":
    main()
