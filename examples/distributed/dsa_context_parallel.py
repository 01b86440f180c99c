"""Context-parallel DeepSeek Sparse Attention prefill across the ranks of a torchrun job.

    torchrun --standalone --nproc-per-node 2 examples/distributed/dsa_context_parallel.py

The sequence's tokens are cut into 2 x world chunks and rank r holds chunks r and
2 x world - 1 - r (a zigzag: causal work grows along the sequence, so every rank gets one cheap
and one dear chunk). Each rank holds its tokens' queries and keys; the keys (the indexer's fp8
keys and their scales, the attention's latent KV) are all-gathered through torch.distributed
(NCCL on GPUs, gloo on the CPU), and each rank runs tilec.ops.dsa.attention_prefill on each of
its chunks over the keys up to that chunk's end: the indexer over its own key ranges, then top-k
and sparse MLA. With --check every rank compares its rows with the one-device step over the
whole sequence; with --json each rank prints its time and peak memory as one JSON line
(bench/dsa_context_parallel.py runs this on one GPU and on several).
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.distributed as dist

from ranks import all_gather_rows, say, start

from tilec.ops import dsa

KEY_SIDE = ("index_k", "k_scale", "kv")  # what every rank needs of every token
BLOCK = 256  # tokens made from one seed, so that any cut of the sequence sees the same inputs


def zigzag_chunks(tokens, world):
    """Each rank's two chunks [begin, end) of a sequence of `tokens`."""
    bounds = [tokens * i // (2 * world) for i in range(2 * world + 1)]
    return [[(bounds[r], bounds[r + 1]), (bounds[2 * world - 1 - r], bounds[2 * world - r])] for r in range(world)]


def make_tokens(begin, end, dims, device, seed):
    """The step's per-token inputs of tokens [begin, end), the same whichever rank makes them."""
    parts = []
    for block in range(begin // BLOCK, math.ceil(end / BLOCK)):
        generator = torch.Generator(device=device).manual_seed(seed * 1_000_003 + block)

        def uniform(*shape, low=-1.0, high=1.0):
            return torch.rand(BLOCK, *shape, generator=generator, device=device) * (high - low) + low

        rows = slice(max(begin - block * BLOCK, 0), min(end - block * BLOCK, BLOCK))
        part = dict(index_q=uniform(dims.index_heads, dims.index_dim).to(torch.float8_e4m3fn),
                    weights=uniform(dims.index_heads, low=0.1),
                    index_k=uniform(dims.index_dim).to(torch.float8_e4m3fn),
                    k_scale=uniform(low=0.5, high=2.0),
                    q=uniform(dims.heads, dims.d_qk).to(torch.bfloat16),
                    kv=uniform(1, dims.d_qk).to(torch.bfloat16))
        parts.append({name: t[rows] for name, t in part.items()})
    return {name: torch.cat([part[name] for part in parts]) for name in parts[0]}


def prefill_step(mine, chunks, rank, dims):
    """(out, lse, indices) of this rank's tokens (`mine`, of its chunks `chunks[rank]` in order)."""
    rows_of_rank = [sum(end - begin for begin, end in spans) for spans in chunks]
    gathered = {name: all_gather_rows(mine[name], rows_of_rank) for name in KEY_SIDE}
    # the gathered rows are in rank order, each rank's chunks in its order: put them in sequence order
    pieces, row = [], 0
    for spans in chunks:
        for begin, end in spans:
            pieces.append((begin, row, end - begin))
            row += end - begin
    keys = {name: torch.cat([t[at:at + n] for _, at, n in sorted(pieces)]) for name, t in gathered.items()}
    del gathered
    results, row = [], 0
    for begin, end in chunks[rank]:
        own = slice(row, row + end - begin)
        row += end - begin
        results.append(dsa.attention_prefill(mine["index_q"][own], mine["weights"][own], keys["index_k"][:end],
                                             keys["k_scale"][:end], mine["q"][own], keys["kv"][:end],
                                             topk=dims.topk, d_v=dims.d_v, chunk=dims.chunk))
    return tuple(torch.cat(parts) for parts in zip(*results))


def check(result, mine, chunks, rank, dims, device, seed):
    """The largest differences between this rank's rows and the one-device step's."""
    whole = make_tokens(0, dims.tokens, dims, device, seed)
    expected = dsa.attention_prefill(whole["index_q"], whole["weights"], whole["index_k"], whole["k_scale"],
                                     whole["q"], whole["kv"], topk=dims.topk, d_v=dims.d_v, chunk=dims.chunk)
    rows = torch.cat([torch.arange(begin, end, device=device) for begin, end in chunks[rank]])
    out, lse, indices = result
    ref_out, ref_lse, ref_indices = (t[rows] for t in expected)
    out, ref_out = out.double(), ref_out.double()
    return dict(out=(1 - 2 * (out * ref_out).sum() / (out * out + ref_out * ref_out).sum()).item(),
                lse=(lse - ref_lse).abs().max().item(),
                indices=int((indices.sort(dim=1).values != ref_indices.sort(dim=1).values).any(dim=1).sum()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=8192, help="the sequence's length (queries = keys)")
    parser.add_argument("--index-heads", type=int, default=64)
    parser.add_argument("--index-dim", type=int, default=128)
    parser.add_argument("--heads", type=int, default=128)
    parser.add_argument("--d-qk", type=int, default=576)
    parser.add_argument("--d-v", type=int, default=512)
    parser.add_argument("--topk", type=int, default=2048)
    parser.add_argument("--chunk", type=int, default=4096, help="queries whose logits are made at once")
    parser.add_argument("--repeat", type=int, default=3, help="timed steps after a warm-up step")
    parser.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                        help="compare with the one-device step (which holds the whole sequence)")
    parser.add_argument("--json", action="store_true", help="print each rank's figures as a JSON line")
    parser.add_argument("--device", default="auto", help="auto, cuda or cpu")
    parser.add_argument("--seed", type=int, default=2026)
    dims = parser.parse_args()
    rank, world, device = start(dims.device)
    chunks = zigzag_chunks(dims.tokens, world)
    if min(end - begin for spans in chunks for begin, end in spans) < 1:
        raise SystemExit(f"--tokens {dims.tokens} is too short for {2 * world} chunks")
    gpu = device.type == "cuda"

    def synchronize():
        if gpu:
            torch.cuda.synchronize()

    parts = [make_tokens(begin, end, dims, device, dims.seed) for begin, end in chunks[rank]]
    mine = {name: torch.cat([part[name] for part in parts]) for name in parts[0]}
    del parts
    for name in KEY_SIDE:  # what another rank holds arrives by the all-gather only
        mine[name] = mine[name].clone()
    synchronize()
    input_bytes = torch.cuda.memory_allocated(device) if gpu else 0
    if gpu:
        torch.cuda.reset_peak_memory_stats(device)
    result = prefill_step(mine, chunks, rank, dims)  # compiles, loads
    times = []
    for _ in range(dims.repeat):
        del result
        synchronize()
        dist.barrier()
        start_time = time.perf_counter()
        result = prefill_step(mine, chunks, rank, dims)
        synchronize()
        times.append(time.perf_counter() - start_time)
    figures = dict(rank=rank, world=world, device=str(device), tokens=dims.tokens, topk=dims.topk, heads=dims.heads,
                   queries=sum(end - begin for begin, end in chunks[rank]), ms=statistics.median(times) * 1e3,
                   input_bytes=input_bytes, peak_bytes=torch.cuda.max_memory_allocated(device) if gpu else None)
    ok = True
    if dims.check:
        errors = check(result, mine, chunks, rank, dims, device, dims.seed)
        ok = errors["out"] <= 1e-5 and errors["lse"] <= 1e-4 and errors["indices"] == 0
        figures["errors"] = errors
    if dims.json:
        say(json.dumps(figures))
    else:
        memory = f", peak {figures['peak_bytes'] / 2**30:.2f} GiB" if gpu else ""
        verdict = ""
        if dims.check:
            verdict = (f"; against one device: out {errors['out']:.1e}, lse {errors['lse']:.1e}, "
                       f"{errors['indices']} rows of other indices: {'ok' if ok else 'WRONG'}")
        say(f"rank {rank}/{world} on {device}: {figures['queries']} of {dims.tokens} queries (chunks "
            f"{chunks[rank]}) in {figures['ms']:.1f} ms{memory}{verdict}")
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
