"""Compile time of the GEMM kernel (bench/kernels.py) for CUDA, cold and warm cache.

    python bench/compile_time.py [--arch sm_90a] [--runs 3]

Each compile runs in a fresh Python process and reports the kernel's compile_seconds
(parse, elaborate, passes, CUDA codegen, NVRTC or the disk cache): first into an empty
cache (cold), then `runs` more times with the cache the first filled (warm). Needs
NVRTC, not a GPU.
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

ONE_COMPILE = """
import sys
sys.path.insert(0, {here!r})
import tilec, kernels
jitted = tilec.jit(kernels.matmul.__wrapped__, out_idx=[-1], target="cuda", arch={arch!r})
print(jitted.compile(M=4096, N=4096, K=4096).compile_seconds * 1e3)
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    code = ONE_COMPILE.format(here=HERE, arch=args.arch)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TILEC_CACHE_DIR=cache)
        times = [float(subprocess.run([sys.executable, "-c", code], env=env, check=True, text=True,
                                      capture_output=True).stdout.split()[-1])
                 for _ in range(1 + args.runs)]
    print(f"GEMM kernel (bf16, 4096^3, 128x128x32 tiles, 3 stages) for {args.arch}: "
          f"cold {times[0]:.0f} ms, warm {', '.join(f'{t:.1f}' for t in times[1:])} ms")


if __name__ == "__main__":
    main()
