"""tilec's attention forward kernel under several variants, timed in interleaved rounds against
cuDNN on one GPU: the technique ladder of issue 14 (bench/RESULTS.md).

    python bench/attention_variants.py [--seq 4096,16384] [--dims 128,64] [--rounds 7] [--variants NAMES]
        [--sources NAME=FILE,...]

--sources adds a side for each copy of python/tilec/ops/attention.py named (an older commit's, an
edited one: `git show REV:python/tilec/ops/attention.py > FILE`), loaded as a module of its own
and run as the library runs it on Hopper (HOPPER_CONFIGS, overlap where HOPPER_OVERLAP_DIMS has
d), so that a change to the kernel's source is measured against the one before in one process.

B * S = 64K tokens, H = 16, fp16, bhsd, causal and not. Each variant is attention_forward compiled
with its arguments and pass configs (VARIANTS), checked on batch 0, heads 0-1 against float32
SDPA (relative Frobenius error under 1e-2, else the cell says ERR), then cuDNN and every
variant are timed once a round (CUDA-event median of 10 calls after 2, bench/timing.py) for
--rounds rounds; each cell is the median of its rounds, so the GPU clock's drift within the run
falls on every variant alike. Prints one line a (d, causal): TFLOP/s and the ratio to cuDNN.
"""

import argparse
import importlib.util
import os
import statistics
import sys

import tilec
from tilec.ops import attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TOKENS, HEADS = 64 * 1024, 16
# name: (tilec.pingpong, attention_forward arguments over HOPPER_CONFIGS)
VARIANTS = {
    "plain": (False, {}),                     # S; softmax; P V, each gemm waiting for itself
    "overlap": (False, {"overlap": True}),    # FlashAttention-3's order, no turns
    "overlap+pp": (True, {"overlap": True}),  # with turns: the default at d = 64 and 128
}


def variant_kernel(module, seq, dim, causal, pingpong, arguments):
    jitted = module.attention_forward
    configs = {**jitted.pass_configs, "tilec.pingpong": pingpong}
    kernel = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, pass_configs=configs)
    return kernel(batch=TOKENS // seq, heads=HEADS, heads_kv=HEADS, seq_q=seq, seq_kv=seq, dim=dim, causal=causal,
                  sm_scale=dim ** -0.5, layout="bhsd", dtype="float16",
                  **{**module.HOPPER_CONFIGS[dim], **arguments})


def source_module(name, path):
    # Under tilec.ops, so that the copy's relative imports find the library's modules.
    spec = importlib.util.spec_from_file_location(f"tilec.ops.attention_source_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sides(names, sources, dim):
    """name: (module, tilec.pingpong, attention_forward arguments) of each side."""
    out = {name: (attention, *VARIANTS[name]) for name in names}
    for name, module in sources.items():
        out[name] = (module, True, {"overlap": dim in module.HOPPER_OVERLAP_DIMS})
    return out


def line(seq, dim, causal, names, sources, rounds):
    # torch where the GPU runs: the sides and arguments are checked without it.
    import torch  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415, N812
    from timing import interleaved_ms  # noqa: PLC0415
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    torch.manual_seed(0)
    shape = (TOKENS // seq, HEADS, seq, dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    flops = 4.0 * shape[0] * HEADS * seq * seq * dim * (0.5 if causal else 1.0)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(*(x[:1, :2].float() for x in (q, k, v)), is_causal=causal)
    calls, notes = {}, {}
    for name, (module, pingpong, arguments) in sides(names, sources, dim).items():
        try:
            kernel = variant_kernel(module, seq, dim, causal, pingpong, arguments)
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
    for name in notes:
        cell = f"{rate[name]:.0f} ({rate[name] / rate['cuDNN']:.2f}x)" if name in rate else ""
        text += f" {name} {cell}{notes[name]} |"
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seq", default="4096", help="comma-separated sequence lengths")
    parser.add_argument("--dims", default="128,64")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated names of VARIANTS (empty: none)")
    parser.add_argument("--sources", default="", help="comma-separated NAME=FILE: copies of attention.py")
    args = parser.parse_args(argv)
    names = [n for n in args.variants.split(",") if n]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; they are {list(VARIANTS)}")
    sources = {}
    for item in (x for x in args.sources.split(",") if x):
        name, _, path = item.partition("=")
        if not name or not os.path.isfile(path) or name in VARIANTS or name in sources:
            parser.error(f"--sources takes NAME=FILE with a new name and an existing file, not {item!r}")
        sources[name] = source_module(name, path)
    for seq in (int(s) for s in args.seq.split(",")):
        for dim in (int(d) for d in args.dims.split(",")):
            for causal in (False, True):
                print(line(seq, dim, causal, names, sources, args.rounds), flush=True)


if __name__ == "__main__":
    main()
