"""What ptxas makes of a library kernel for sm_90a, without a GPU: registers a thread, bytes
spilled, and the waits ptxas injects into asynchronous wgmma code (warning C7517).

    python bench/kernel_registers.py [--kernel attention_forward|attention_backward] [--causal]
        [--dim 128] [--seq 4096] [--pass-config KEY=VALUE ...] [--source FILE]

The kernel is the one tilec.ops builds on Hopper (HOPPER_CONFIGS / HOPPER_BACKWARD_CONFIGS,
the forward in FlashAttention-3's order), fp16, [B, H, S, d] with B * S = 64K tokens and H = 16;
--pass-config adds to its pass configs (tilec.warp_specialize=true, tilec.persistent=false). Its
CUDA source goes through nvcc -cubin with the options NVRTC gets (-use_fast_math under
tilec.fast_math) and ptxas -v. nvcc is taken from PATH, else $CUDA_HOME/bin. --source also writes
the generated source to FILE (cuobjdump -sass on a cubin of it shows the instructions).
"""

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import tilec
from tilec.ops import attention

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOKENS, HEADS = 64 * 1024, 16
KERNELS = {
    "attention_forward": (attention.attention_forward, lambda dim: {**attention.HOPPER_CONFIGS[dim], "overlap": True,
                                                                     "dtype": "float16"}),
    "attention_backward": (attention.attention_backward,
                           lambda dim: {**attention.HOPPER_BACKWARD_CONFIGS[dim], "dtype": "float16"}),
}


def nvcc_path():
    found = shutil.which("nvcc")
    if found:
        return found
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    candidate = pathlib.Path(home) / "bin" / "nvcc"
    if not candidate.exists():
        raise SystemExit("kernel_registers: nvcc is on neither PATH nor $CUDA_HOME/bin")
    return str(candidate)


def pass_config(text):
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    lowered = value.lower()
    return key, True if lowered == "true" else False if lowered == "false" else value


def kernel_source(name, causal, dim, seq, pass_configs):
    jitted, config = KERNELS[name]
    configs = {**jitted.pass_configs, **pass_configs}
    factory = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, target="cuda", arch="sm_90a",
                        pass_configs=configs)
    kernel = factory.compile(batch=TOKENS // seq, heads=HEADS, heads_kv=HEADS, seq_q=seq, seq_kv=seq, dim=dim,
                             causal=causal, sm_scale=dim ** -0.5, layout="bhsd", **config(dim))
    return kernel.get_kernel_source(), bool(configs.get("tilec.fast_math"))


def ptxas_report(source, fast_math):
    """ptxas -v's lines for the kernel: (registers, spill stores, spill loads, injected waits)."""
    with tempfile.TemporaryDirectory() as folder:
        cu = pathlib.Path(folder) / "kernel.cu"
        cu.write_text(source)
        command = [nvcc_path(), "-arch=sm_90a", "-cubin", "-O3", "-std=c++17", "-I", str(ROOT / "device"),
                   "-Xptxas", "-v", "-o", str(pathlib.Path(folder) / "kernel.cubin"), str(cu)]
        if fast_math:
            command.insert(1, "-use_fast_math")
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"kernel_registers: nvcc failed:\n{done.stderr[-2000:]}")
    registers = re.search(r"Used (\d+) registers", done.stderr)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", done.stderr)
    if not registers or not spills:
        raise SystemExit(f"kernel_registers: no ptxas -v report in nvcc's output:\n{done.stderr[-2000:]}")
    waits = done.stderr.count("C7517")
    return int(registers.group(1)), int(spills.group(1)), int(spills.group(2)), waits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", choices=list(KERNELS), default="attention_backward")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dim", type=int, default=128, choices=attention.HEAD_DIMS)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--pass-config", type=pass_config, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--source", type=pathlib.Path, help="also write the generated CUDA source here")
    args = parser.parse_args(argv)
    source, fast_math = kernel_source(args.kernel, args.causal, args.dim, args.seq, dict(args.pass_config))
    if args.source:
        args.source.write_text(source)
    registers, stores, loads, waits = ptxas_report(source, fast_math)
    specialized = "setmaxnreg_inc<" in source
    print(f"{args.kernel} d={args.dim} S={args.seq} causal={args.causal}: {registers} registers at launch"
          f"{' (warp-specialized: the consumers grow past it by setmaxnreg)' if specialized else ''}, "
          f"{stores} bytes spill stores, {loads} bytes spill loads, {waits} waits ptxas injected (C7517)")


if __name__ == "__main__":
    sys.exit(main())
