"""tilec's attention forward kernel under several variants, timed in interleaved rounds against
cuDNN on one GPU: the technique ladder of issue 14 (bench/RESULTS.md).

    python bench/attention_variants.py [--seq 4096] [--dims 128,64] [--rounds 7] [--variants NAMES]

B * S = 64K tokens, H = 16, fp16, bhsd, causal and not. Each variant is attention_forward compiled
with its arguments and pass configs (VARIANTS), checked on batch 0, heads 0-1 against float32
SDPA (relative Frobenius error under 1e-2, else the cell says ERR), then cuDNN and every
variant are timed once a round (CUDA-event median of 10 calls after 2, bench/timing.py) for
--rounds rounds; each cell is the median of its rounds, so the GPU clock's drift within the run
falls on every variant alike. Prints one line a (d, causal): TFLOP/s and the ratio to cuDNN.
"""

import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tilec
from tilec.ops import attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import interleaved_ms  # noqa: E402

TOKENS, HEADS = 64 * 1024, 16
# name: (tilec.pingpong, attention_forward arguments over HOPPER_CONFIGS)
VARIANTS = {
    "plain": (False, {}),                     # S; softmax; P V, each gemm waiting for itself
    "overlap": (False, {"overlap": True}),    # FlashAttention-3's order, no turns
    "overlap+pp": (True, {"overlap": True}),  # with turns: the default at d = 64 and 128
}


def variant_kernel(seq, dim, causal, pingpong, arguments):
    jitted = attention.attention_forward
    configs = {**jitted.pass_configs, "tilec.pingpong": pingpong}
    kernel = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, pass_configs=configs)
    return kernel(batch=TOKENS // seq, heads=HEADS, heads_kv=HEADS, seq_q=seq, seq_kv=seq, dim=dim, causal=causal,
                  sm_scale=dim ** -0.5, layout="bhsd", dtype="float16",
                  **{**attention.HOPPER_CONFIGS[dim], **arguments})


def line(seq, dim, causal, names, rounds):
    torch.manual_seed(0)
    shape = (TOKENS // seq, HEADS, seq, dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    flops = 4.0 * shape[0] * HEADS * seq * seq * dim * (0.5 if causal else 1.0)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(*(x[:1, :2].float() for x in (q, k, v)), is_causal=causal)
    calls, notes = {}, {}
    for name in names:
        pingpong, arguments = VARIANTS[name]
        try:
            kernel = variant_kernel(seq, dim, causal, pingpong, arguments)
            out, _ = kernel(q, k, v)
            error = ((out[:1, :2].float() - ref).norm() / ref.norm()).item()
            notes[name] = "" if error < 1e-2 else f" ERR {error:.1e}"
            calls[name] = lambda kernel=kernel: kernel(q, k, v)
        except Exception as e:  # noqa: BLE001 (the cell says why)
            notes[name] = f" FAIL {type(e).__name__}: {str(e)[:200]}"

    def cudnn():
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    times = interleaved_ms({"cuDNN": cudnn} | calls, rounds,
                           contexts={"cuDNN": lambda: sdpa_kernel(SDPBackend.CUDNN_ATTENTION)})
    rate = {name: flops / statistics.median(t) * 1e-9 for name, t in times.items()}
    text = f"S={seq} d={dim} causal={int(causal)} cuDNN {rate['cuDNN']:.0f} |"
    for name in names:
        cell = f"{rate[name]:.0f} ({rate[name] / rate['cuDNN']:.2f}x)" if name in rate else ""
        text += f" {name} {cell}{notes[name]} |"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--dims", default="128,64")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated names of VARIANTS")
    args = parser.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; they are {list(VARIANTS)}")
    for dim in (int(d) for d in args.dims.split(",")):
        for causal in (False, True):
            print(line(args.seq, dim, causal, names, args.rounds), flush=True)


if __name__ == "__main__":
    main()
