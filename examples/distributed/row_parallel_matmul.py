"""A row-parallel matmul across the ranks of a torchrun job: C = A @ B with the K dim split, each
rank multiplying its slice with tilec.ops.gemm and an all_reduce summing the partial products,
as a tensor-parallel linear layer's second half does.

    torchrun --standalone --nproc-per-node 2 examples/distributed/row_parallel_matmul.py

One GPU a rank through NCCL where the node has enough, else the CPU through gloo (--device
picks). The ranks share one kernel cache: one of them builds the gemm, the others load it.
Every rank checks its C against float32 torch and prints one line.
"""

import argparse
import sys

import torch
import torch.distributed as dist

from ranks import say, start

import tilec.ops


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=512)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--device", default="auto", help="auto, cuda or cpu")
    args = parser.parse_args()
    rank, world, device = start(args.device)
    if args.k % world:
        raise SystemExit(f"--k {args.k} must split evenly over {world} ranks")
    generator = torch.Generator().manual_seed(2026)  # every rank makes the same A and B
    a = (torch.rand(args.m, args.k, generator=generator) * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(args.k, args.n, generator=generator) * 2 - 1).to(torch.bfloat16)
    rows = slice(rank * args.k // world, (rank + 1) * args.k // world)

    partial = tilec.ops.gemm(a[:, rows].contiguous().to(device), b[rows].to(device))
    c = partial.float()
    dist.all_reduce(c)

    expected = (a.float() @ b.float()).to(device)
    error = ((c - expected).abs().max() / expected.abs().max()).item()
    ok = error <= 1e-2  # each partial product is rounded to bfloat16 once
    say(f"rank {rank}/{world} on {device}: C [{args.m}, {args.n}] = the sum of {world} tilec gemms of K/{world}; "
        f"max error {error:.2e} of max |C|: {'ok' if ok else 'WRONG'}")
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
