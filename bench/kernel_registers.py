"""What ptxas makes of a library kernel for sm_90a, without a GPU: registers a thread, bytes
spilled, the waits ptxas injects into asynchronous wgmma code (warning C7517) and whether it
serializes the wgmmas (C7514).

    python bench/kernel_registers.py [--kernel NAME] [--causal] [--dim 128] [--seq 4096]
        [--pass-config KEY=VALUE ...] [--source FILE]

The kernel is the one tilec.ops builds on Hopper: attention_forward and attention_backward
(HOPPER_CONFIGS / HOPPER_BACKWARD_CONFIGS, the forward in FlashAttention-3's order), fp16,
[B, H, S, d] with B * S = 64K tokens and H = 16, and their varlen forms (the packing read at
the call); tilec.ops.dsa's kernels at DeepSeek-V3.2's dims (their lengths read at the call;
--causal, --dim and --seq don't apply). --pass-config adds to its pass configs
(tilec.warp_specialize=true, tilec.persistent=false). It is built as tilec builds it, through
NVRTC, with `-Xptxas -v` (compile_flags) into a fresh cache, and ptxas's report is read from the
log. --source also writes the generated source to FILE.
"""

import argparse
import contextlib
import inspect
import os
import pathlib
import re
import sys
import tempfile

import tilec
from tilec.ops import attention
from tilec.ops.dsa import indexer, indexer_hopper, sparse_mla, sparse_mla_hopper, sparse_mla_seesaw, topk

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOKENS, HEADS = 64 * 1024, 16
SPARSE_MLA = dict(heads=128, topk=2048, sm_scale=576 ** -0.5)


def attention_constants(configs, **extra):
    """The constants of an attention kernel for (causal, dim, seq), with its Hopper config."""
    def constants(causal, dim, seq):
        shape = dict(batch=TOKENS // seq, heads=HEADS, heads_kv=HEADS, seq_q=seq, seq_kv=seq, dim=dim, causal=causal,
                     sm_scale=dim ** -0.5, layout="bhsd", dtype="float16")
        return {**shape, **configs[dim], **extra}
    return constants


def fixed(**constants):
    return lambda causal, dim, seq: constants


# name: (the jit factory, its constants for (causal, dim, seq)); a factory takes those it names
KERNELS = {
    "attention_forward": (attention.attention_forward, attention_constants(attention.HOPPER_CONFIGS, overlap=True)),
    "attention_backward": (attention.attention_backward, attention_constants(attention.HOPPER_BACKWARD_CONFIGS)),
    "attention_forward_varlen": (attention.attention_forward_varlen, attention_constants(attention.HOPPER_CONFIGS)),
    "attention_backward_varlen": (attention.attention_backward_varlen,
                                  attention_constants(attention.HOPPER_BACKWARD_CONFIGS)),
    "dsa_indexer": (indexer.indexer_logits_kernel, fixed(heads=64, dim=128, **indexer.HOPPER_CONFIG)),
    "dsa_indexer_tensor_head_sum": (indexer.indexer_logits_kernel,
                                    fixed(heads=64, dim=128, **dict(indexer.HOPPER_CONFIG, tensor_head_sum=True))),
    "dsa_indexer_multicast": (indexer.indexer_logits_kernel,
                              fixed(heads=64, dim=128, **dict(indexer.HOPPER_CONFIG, multicast=True))),
    "dsa_indexer_overlap": (indexer.indexer_logits_kernel,
                            fixed(heads=64, dim=128, **dict(indexer.HOPPER_CONFIG, block_N=64, overlap=True))),
    "dsa_indexer_hopper": (indexer_hopper.indexer_logits_hopper_kernel,
                           fixed(heads=64, dim=128, **indexer_hopper.HOPPER_CONFIG)),
    "dsa_topk": (topk.topk_kernel, fixed(k=2048, **topk.CONFIG)),
    "dsa_prefill": (sparse_mla.sparse_mla_prefill_kernel,
                    fixed(dim=512, tail_dim=64, **SPARSE_MLA, **sparse_mla.PREFILL_CONFIG)),
    "dsa_prefill_hopper": (sparse_mla_hopper.sparse_mla_prefill_hopper_kernel,
                           fixed(dim=512, tail_dim=64, **SPARSE_MLA, **sparse_mla_hopper.HOPPER_CONFIG)),
    "dsa_prefill_seesaw": (sparse_mla_seesaw.sparse_mla_prefill_seesaw_kernel,
                           fixed(dim=512, tail_dim=64, **SPARSE_MLA, **sparse_mla_seesaw.SEESAW_CONFIG)),
    "dsa_prefill_seesaw_two_producers": (sparse_mla_seesaw.sparse_mla_prefill_seesaw_kernel,
                                         fixed(dim=512, tail_dim=64, producers=2, **SPARSE_MLA,
                                               **sparse_mla_seesaw.SEESAW_CONFIG)),
    "dsa_decode": (sparse_mla.sparse_mla_decode_kernel, fixed(s_q=2, **SPARSE_MLA, **sparse_mla.CONFIG)),
    "dsa_decode_hopper": (sparse_mla_hopper.sparse_mla_decode_hopper_kernel,
                          fixed(s_q=2, **SPARSE_MLA, **sparse_mla_hopper.HOPPER_CONFIG)),
    "dsa_decode_crossover": (sparse_mla_hopper.sparse_mla_decode_hopper_kernel,
                             fixed(s_q=2, crossover=True, **SPARSE_MLA, **sparse_mla_hopper.HOPPER_CONFIG)),
    "dsa_decode_split": (sparse_mla_hopper.sparse_mla_decode_hopper_kernel,
                         fixed(s_q=2, split_dequant=True, **SPARSE_MLA, **sparse_mla_hopper.HOPPER_CONFIG)),
    "dsa_decode_persistent": (sparse_mla_hopper.sparse_mla_decode_hopper_kernel,
                              fixed(s_q=2, split_dequant=True, programs=132, **SPARSE_MLA,
                                    **sparse_mla_hopper.HOPPER_CONFIG)),
    "dsa_decode_seesaw": (sparse_mla_seesaw.sparse_mla_decode_seesaw_kernel,
                          fixed(s_q=2, **SPARSE_MLA, **sparse_mla_seesaw.SEESAW_CONFIG)),
    "dsa_decode_seesaw_two_producers": (sparse_mla_seesaw.sparse_mla_decode_seesaw_kernel,
                                        fixed(s_q=2, producers=2, **SPARSE_MLA, **sparse_mla_seesaw.SEESAW_CONFIG)),
}


def pass_config(text):
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    lowered = value.lower()
    return key, True if lowered == "true" else False if lowered == "false" else value


def kernel_source(name, causal, dim, seq, pass_configs, compile_flags=None):
    jitted, constants = KERNELS[name]
    configs = {**jitted.pass_configs, **pass_configs}
    factory = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, target="cuda", arch="sm_90a",
                        pass_configs=configs, compile_flags=compile_flags)
    taken = inspect.signature(jitted.__wrapped__).parameters
    kernel = factory.compile(**{key: value for key, value in constants(causal, dim, seq).items() if key in taken})
    return kernel.get_kernel_source()


@contextlib.contextmanager
def stderr_into(path):
    # The core's log goes to file descriptor 2, not through sys.stderr.
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "w") as target:
            os.dup2(target.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def ptxas_report(name, causal, dim, seq, pass_configs):
    """ptxas -v's lines for the kernel as NVRTC builds it: (registers, spill stores, spill loads,
    injected waits, serializations). ptxas injects a wait (warning C7517) where an asynchronous
    wgmma's accumulator is used before the program waits, and serializes a function's wgmmas
    (C7514) where other instructions read an accumulator while its wgmma may run. nvcc is no stand-in: on the same source it gives shared memory 32-bit
    addresses where NVRTC computes 64-bit ones, and the Hopper prefill's producer spilled under
    NVRTC alone (bench/RESULTS.md, thirty-ninth session)."""
    with tempfile.TemporaryDirectory() as folder:
        saved_cache = os.environ.get("TILEC_CACHE_DIR")
        os.environ["TILEC_CACHE_DIR"] = folder  # a fresh cache, so that NVRTC and ptxas run
        log = pathlib.Path(folder) / "log.txt"
        try:
            with stderr_into(log):
                tilec.set_log_level("DEBUG")
                kernel_source(name, causal, dim, seq, pass_configs, compile_flags=["-Xptxas", "-v"])
        finally:
            tilec.set_log_level(os.environ.get("TILEC_LOG_LEVEL", "WARNING"))
            if saved_cache is None:
                del os.environ["TILEC_CACHE_DIR"]
            else:
                os.environ["TILEC_CACHE_DIR"] = saved_cache
        said = log.read_text()
    registers = re.search(r"Used (\d+) registers", said)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", said)
    if not registers or not spills:
        raise SystemExit(f"kernel_registers: no ptxas -v report in NVRTC's log:\n{said[-2000:]}")
    return (int(registers.group(1)), int(spills.group(1)), int(spills.group(2)), said.count("C7517"),
            said.count("C7514"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", choices=list(KERNELS), default="attention_backward")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dim", type=int, default=128, choices=attention.HEAD_DIMS)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--pass-config", type=pass_config, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--source", type=pathlib.Path, help="also write the generated CUDA source here")
    args = parser.parse_args(argv)
    source = kernel_source(args.kernel, args.causal, args.dim, args.seq, dict(args.pass_config))
    if args.source:
        args.source.write_text(source)
    registers, stores, loads, waits, serialized = ptxas_report(args.kernel, args.causal, args.dim, args.seq,
                                                               dict(args.pass_config))
    specialized = "setmaxnreg_inc<" in source
    shape = (f"d={args.dim} S={args.seq} causal={args.causal}" if args.kernel.startswith("attention")
             else "at DeepSeek-V3.2's dims")
    print(f"{args.kernel} {shape}: {registers} registers at launch"
          f"{' (warp-specialized: the consumers grow past it by setmaxnreg)' if specialized else ''}, "
          f"{stores} bytes spill stores, {loads} bytes spill loads, {waits} waits ptxas injected (C7517), "
          f"{'wgmmas serialized (C7514)' if serialized else 'wgmmas not serialized'}")


if __name__ == "__main__":
    sys.exit(main())
