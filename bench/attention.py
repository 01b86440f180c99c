"""Attention: tilec.ops.flash_attention (forward) and flash_attention_backward against torch's
scaled_dot_product_attention with the cuDNN and FlashAttention-2 backends, in one run on one GPU.

    python bench/attention.py [--quick] [--no-backward] [--decode] [--rounds 5] [--append bench/RESULTS.md]
        [--tilelang-example examples/flash_attention/example_mha_fwd_bhsd.py]

Shapes (issue 14): B * S = 64K tokens, H = 16 heads, S in {1024, 4096, 16384}, head dim d in
{64, 128}, causal and not, float16, laid out [B, H, S, d] for every side. --quick runs S = 4096
alone. Each tilec result is first checked on fresh random inputs against float32 attention
(torch's math backend) on the first batch element's first two heads: relative Frobenius error
under 1e-2, gradients included. Every side's forward is timed once a round for --rounds rounds
(a CUDA-event median of 10 calls after 2, bench/timing.py's interleaved_ms), then every side's
backward likewise, and each figure is the median of its rounds: the GPU's clocks drift within a
run by more than the ratios' differences, so each side gets times from every part of it.
TFLOP/s counts 4 B H S^2 d for the forward pass and 2.5 times that for the backward, halved when
causal. With --tilelang-example (tilelang installed: bench/tilelang_wheels.sh), TileLang's own
example kernel is a side too, forward only, checked like tilec's (issue 14). A side that fails
(a backend torch can't run here, an error) shows its reason. Prints one table; --append adds it to RESULTS.md
with the date, GPU, commit ($TILEC_COMMIT where set: bench/provenance.py) and command. --decode
prints the decoding table instead (decode_table: one query a sequence over 8K-128K keys,
grouped-query and not, against SDPA and the copy rate of the K/V bytes).
"""

import argparse
import contextlib
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tilec import ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plots import append_results  # noqa: E402
from timing import interleaved_ms, time_ms  # noqa: E402

TOKENS, HEADS = 64 * 1024, 16
BACKENDS = {"cuDNN": SDPBackend.CUDNN_ATTENTION, "FA2": SDPBackend.FLASH_ATTENTION}


def rel_error(out, ref):
    return ((out.float() - ref).norm() / ref.norm()).item()


def check(q, k, v, dout, causal):
    """tilec's output and gradients against float32 attention on batch 0, heads 0-1: the worst
    relative error."""
    out, lse = ops.flash_attention(q, k, v, causal=causal, layout="bhsd", return_lse=True)
    grads = ops.flash_attention_backward(q, k, v, out, lse, dout, causal=causal, layout="bhsd")
    part = [x[:1, :2].float().detach().requires_grad_() for x in (q, k, v)]
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(*part, is_causal=causal)
    ref_grads = torch.autograd.grad(ref, part, dout[:1, :2].float())
    errors = [rel_error(out[:1, :2], ref)] + [rel_error(g[:1, :2], r) for g, r in zip(grads, ref_grads)]
    return max(errors)


def sdpa_calls(backend, q, k, v, dout, causal, backward):
    """SDPA's forward (to be run under sdpa_kernel(backend)) and backward (chosen by the forward
    that recorded it)."""
    calls = {"fwd": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)}
    if backward:
        leaves = [x.detach().requires_grad_() for x in (q, k, v)]
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
        calls["bwd"] = lambda: torch.autograd.grad(out, leaves, dout, retain_graph=True)
    return calls


def tilec_calls(q, k, v, dout, causal, backward):
    calls = {"fwd": lambda: ops.flash_attention(q, k, v, causal=causal, layout="bhsd")}
    if backward:
        out, lse = ops.flash_attention(q, k, v, causal=causal, layout="bhsd", return_lse=True)
        calls["bwd"] = lambda: ops.flash_attention_backward(q, k, v, out, lse, dout, causal=causal, layout="bhsd")
    return calls


def tilelang_example(path):
    """TileLang's examples/flash_attention/example_mha_fwd_bhsd.py, loaded under tilelang."""
    import importlib.util  # noqa: PLC0415

    import tilelang  # noqa: F401, PLC0415 (the example's own import; missing, the side says so)

    spec = importlib.util.spec_from_file_location("tilelang_example_mha_fwd_bhsd", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tilelang_calls(example, q, k, v, causal):
    """The example's flashattn with the config its run_regression_perf uses (blocks 128 x 128,
    2 stages, 256 threads), its output checked like tilec's: forward only."""
    batch, heads, seq, dim = q.shape
    kernel = example.flashattn(batch, heads, seq, seq, dim, causal, block_M=128, block_N=128, num_stages=2,
                               threads=256)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(*(x[:1, :2].float() for x in (q, k, v)), is_causal=causal)
    error = rel_error(kernel(q, k, v)[:1, :2], ref)
    if not error < 1e-2:
        raise ValueError(f"relative error {error:.1e} against float32")
    return {"fwd": lambda: kernel(q, k, v)}


def run(seqs, dims, backward, rounds, example=None):
    rows = []
    for seq in seqs:
        for dim in dims:
            for causal in (False, True):
                torch.manual_seed(0)
                shape = (TOKENS // seq, HEADS, seq, dim)
                q, k, v, dout = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(4))
                flops = 4.0 * shape[0] * HEADS * seq * seq * dim * (0.5 if causal else 1.0)
                row = {"S": seq, "d": dim, "causal": causal, "sides": {}}
                try:
                    row["error"] = check(q, k, v, dout, causal)
                    sides = {"tilec": lambda: tilec_calls(q, k, v, dout, causal, backward)}
                except Exception as e:  # noqa: BLE001 (the row says why)
                    row["error"], sides = None, {}
                    row["failure"] = f"tilec: {type(e).__name__}: {str(e)[:120]}"
                for name, backend in BACKENDS.items():
                    sides[name] = lambda b=backend: sdpa_calls(b, q, k, v, dout, causal, backward)
                if example is not None:
                    sides["TileLang"] = lambda: tilelang_calls(example, q, k, v, causal)
                contexts = {(name, "fwd"): lambda b=backend: sdpa_kernel(b) for name, backend in BACKENDS.items()}
                calls = {}
                for name, make in sides.items():
                    try:
                        made = make()
                        for direction, call in made.items():
                            # a side that can't run here is left out, and the row says why
                            with contexts.get((name, direction), contextlib.nullcontext)():
                                call()
                        calls |= {(name, direction): call for direction, call in made.items()}
                    except Exception as e:  # noqa: BLE001
                        row["failure"] = row.get("failure", "") + f" {name}: {type(e).__name__}: {str(e)[:80]}"
                # Each pass's sides in rounds of their own: in one round of both, each side's
                # forward ran after another side's backward, under a load of its own.
                medians = {}
                for direction in ("fwd", "bwd"):
                    times = interleaved_ms({key: call for key, call in calls.items() if key[1] == direction}, rounds,
                                           contexts=contexts)
                    medians |= {key: statistics.median(t) for key, t in times.items()}
                for name in sides:
                    if (name, "fwd") in medians:
                        bwd_ms = medians.get((name, "bwd"))
                        row["sides"][name] = (flops / medians[(name, "fwd")] * 1e-9,
                                              bwd_ms and 2.5 * flops / bwd_ms * 1e-9)
                print(row, flush=True)
                rows.append(row)
    return rows


def table(rows, backward):
    def cell(row, side, i):
        value = row["sides"].get(side, (None, None))[i]
        return "-" if value is None else f"{value:.0f}"

    def ratio(row, i, anchor="cuDNN"):
        a, t = row["sides"].get(anchor, (None, None))[i], row["sides"].get("tilec", (None, None))[i]
        return "-" if not a or not t else f"{t / a:.2f}x"

    passes = [("fwd", 0)] + ([("bwd", 1)] if backward else [])
    others = ["cuDNN", "FA2"] + (["TileLang"] if any("TileLang" in row["sides"] for row in rows) else [])
    head = "| S | d | causal | tilec error |"
    rule = "|---:|---:|---|---:|"
    for p, i in passes:
        # TileLang's example is a forward kernel: no backward column
        sides = ["tilec"] + [o for o in others if i == 0 or o != "TileLang"]
        head += "".join(f" {side} {p} |" for side in sides) + f" tilec / cuDNN {p} |"
        rule += "---:|" * (len(sides) + 1)
    lines = [head + " failures |", rule + "---|"]
    for row in rows:
        line = f"| {row['S']} | {row['d']} | {'yes' if row['causal'] else 'no'} | "
        line += ("-" if row["error"] is None else f"{row['error']:.1e}") + " |"
        for _, i in passes:
            sides = ["tilec"] + [o for o in others if i == 0 or o != "TileLang"]
            line += "".join(f" {cell(row, side, i)} |" for side in sides) + f" {ratio(row, i)} |"
        lines.append(line + f" {row.get('failure', '').strip()} |")
    return "\n".join(lines) + "\n"


DECODE_SHAPES = [  # batch, query heads, K/V heads, keys
    (1, 32, 8, 8192), (1, 32, 8, 131072), (16, 32, 8, 8192), (16, 32, 8, 32768), (1, 16, 16, 131072),
    (16, 16, 16, 8192)]


def decode_table():
    """One query per sequence (decoding), d = 128, float16, bshd: tilec (packed query heads,
    split-KV) against SDPA (torch's choice of backend, enable_gqa) and a copy of the same bytes
    (the memory-bound ceiling), each as microseconds and K/V bytes read per second."""
    lines = ["| batch | heads | K/V heads | keys | tilec error | tilec us | SDPA us | copy us | tilec TB/s | "
             "SDPA TB/s | tilec / copy |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for batch, heads, heads_kv, keys in DECODE_SHAPES:
        torch.manual_seed(0)
        q = torch.randn(batch, 1, heads, 128, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(batch, keys, heads_kv, 128, device="cuda", dtype=torch.float16) for _ in range(2))
        kv_bytes = 2 * k.numel() * k.element_size()
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))  # SDPA's [B, H, S, d]
        ref = F.scaled_dot_product_attention(qt.float(), kt.float(), vt.float(), enable_gqa=True).transpose(1, 2)
        error = rel_error(ops.flash_attention(q, k, v), ref)
        tilec_us = 1e3 * time_ms(lambda: ops.flash_attention(q, k, v))
        sdpa_us = 1e3 * time_ms(lambda: F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True))
        source = torch.empty(kv_bytes // 2, device="cuda", dtype=torch.float16)
        target = torch.empty_like(source)
        copy_us = 1e3 * time_ms(lambda: target.copy_(source)) / 2  # reads and writes the bytes: half is a read
        lines.append(f"| {batch} | {heads} | {heads_kv} | {keys} | {error:.1e} | {tilec_us:.0f} | {sdpa_us:.0f} | "
                     f"{copy_us:.0f} | {kv_bytes / tilec_us * 1e-6:.2f} | {kv_bytes / sdpa_us * 1e-6:.2f} | "
                     f"{copy_us / tilec_us:.2f}x |")
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="S = 4096 only")
    parser.add_argument("--no-backward", action="store_true", help="time the forward pass only")
    parser.add_argument("--decode", action="store_true", help="the decoding table instead (one query a sequence)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (bench/timing.py)")
    parser.add_argument("--tilelang-example", metavar="PATH",
                        help="TileLang's examples/flash_attention/example_mha_fwd_bhsd.py: its kernel as a side "
                             "(needs tilelang installed)")
    parser.add_argument("--append", help="add the table to this markdown file")
    args = parser.parse_args()
    backward = not args.no_backward
    if args.decode:
        text = "Attention decoding, float16, d = 128, one query a sequence\n\n" + decode_table()
    else:
        example = None
        if args.tilelang_example:
            try:
                example = tilelang_example(args.tilelang_example)
            except Exception as e:  # noqa: BLE001 (no TileLang side, and the reason is printed)
                print(f"TileLang's example left out: {type(e).__name__}: {e}", flush=True)
        rows = run([4096] if args.quick else [1024, 4096, 16384], [64, 128], backward, args.rounds, example)
        text = (f"Attention, float16, B * S = {TOKENS} tokens, H = {HEADS}, TFLOP/s "
                f"(tilec error: worst relative error of O, dQ, dK, dV against float32)\n\n" + table(rows, backward))
    print("\n" + text)
    if args.append:
        gpu = torch.cuda.get_device_name()
        if args.decode:
            append_results(args.append, text, gpu, "attention-decode", ["tilec us", "SDPA us", "copy us"],
                           f"Attention decoding, {gpu}", "microseconds")
        else:
            sides = ["tilec fwd", "cuDNN fwd", "FA2 fwd"] + (["TileLang fwd"] if "TileLang fwd" in text else [])
            append_results(args.append, text, gpu, "attention", sides, f"Attention forward, {gpu}", "TFLOP/s",
                           label_columns=["S", "d", "causal"])


if __name__ == "__main__":
    main()
