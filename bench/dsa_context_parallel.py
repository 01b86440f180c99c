"""Context-parallel DSA prefill: time and memory a rank against one GPU.

    python bench/dsa_context_parallel.py [--ranks 2] [--tokens 131072 262144] [--device cuda|cpu]
        [--append bench/RESULTS.md] [the example's options: --heads 128 --topk 2048 ...]

Runs examples/distributed/dsa_context_parallel.py under torchrun, once on one rank (the one-GPU
anchor, measured in the same run) and once on --ranks ranks, for each sequence length (queries
= keys = tokens). Per row: the slowest rank's median step time (after a warm-up step), the
largest peak of GPU memory a rank (torch.cuda.max_memory_allocated: inputs and step), and both
against the one-GPU run. Options the script does not know go to the example (its defaults are
DeepSeek-V3.2's dims). --device cpu runs the same on CPU ranks through gloo (no memory figures),
to try the script where there is no GPU. --append adds the table, with the date, device, commit
and command, and its plot to a results file.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots import append_results  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "distributed",
                       "dsa_context_parallel.py")
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def run_ranks(ranks, tokens, device, example_args):
    """Each rank's figures (the example's JSON lines) of one torchrun job."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}", EXAMPLE,
               "--tokens", str(tokens), "--device", device, "--no-check", "--json", *example_args]
    done = subprocess.run(command, env=dict(os.environ, **MULTICAST_OFF), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"dsa_context_parallel: {' '.join(command)} failed:\n{done.stdout}{done.stderr[-4000:]}")
    figures = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if sorted(f["rank"] for f in figures) != list(range(ranks)):
        sys.exit(f"dsa_context_parallel: expected a JSON line from each of {ranks} ranks:\n{done.stdout}")
    return figures


def gib(value):
    return "-" if value is None else f"{value / 2**30:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tokens", type=int, nargs="+", default=[131072, 262144])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--append", help="add the table and its plot to this results file")
    args, example_args = parser.parse_known_args()
    if args.ranks < 2:
        sys.exit("dsa_context_parallel: --ranks must be at least 2 (one rank is the anchor every row has)")
    import torch

    if args.device == "cuda" and torch.cuda.device_count() < args.ranks:
        sys.exit(f"dsa_context_parallel: {args.ranks} ranks need {args.ranks} GPUs; this machine has "
                 f"{torch.cuda.device_count()}")
    device = torch.cuda.get_device_name() if args.device == "cuda" else "CPU backend"
    lines = [f"{args.ranks} x {device}, torch {torch.__version__}, example options: "
             f"{' '.join(example_args) or 'defaults (h_q 128, topk 2048, chunk 4096)'}", "",
             "| S = S_kv | ranks | ms (slowest rank) | speedup | peak GiB a rank | memory a rank vs one GPU |",
             "|---:|---:|---:|---:|---:|---:|"]
    print(lines[0], flush=True)
    for tokens in args.tokens:
        one = run_ranks(1, tokens, args.device, example_args)[0]
        many = run_ranks(args.ranks, tokens, args.device, example_args)
        slowest = max(f["ms"] for f in many)
        peak = None if one["peak_bytes"] is None else max(f["peak_bytes"] for f in many)
        for ranks, ms, bytes_ in ((1, one["ms"], one["peak_bytes"]), (args.ranks, slowest, peak)):
            ratio = "-" if bytes_ is None else f"{bytes_ / one['peak_bytes']:.2f}x"
            lines.append(f"| {tokens} | {ranks} | {ms:.1f} | {one['ms'] / ms:.2f}x | {gib(bytes_)} | {ratio} |")
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    if args.append:
        append_results(args.append, table, device, f"dsa_context_parallel-{args.device}", ["ms (slowest rank)"],
                       f"Context-parallel DSA prefill, {device}", "ms a step")


if __name__ == "__main__":
    main()
