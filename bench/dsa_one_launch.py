"""One warmed-up launch of a tilec.ops.dsa kernel, on bench/dsa_configs.py's shapes, for a profiler
to capture (`ncu -k regex:tilec_ -s 1 -c 1 ...`: the second launch):

    python bench/dsa_one_launch.py prefill          # sparse_mla_prefill_hopper_kernel
    python bench/dsa_one_launch.py seesaw           # sparse_mla_prefill_seesaw_kernel
    python bench/dsa_one_launch.py decode [split]   # sparse_mla_decode_hopper_kernel [split_dequant=True]
    python bench/dsa_one_launch.py decode persistent N   # the split decode over N programs
    python bench/dsa_one_launch.py decode seesaw    # sparse_mla_decode_seesaw_kernel
    python bench/dsa_one_launch.py indexer [S] [field=value ...]   # indexer_logits_kernel, HOPPER_CONFIG

The prefills: h_q = 128, topk 2048, S = 4096, S_kv = 8192, one index in 7 invalid. The decode:
b = 128, s_q = 2, topk 2048 over random cache slots. The indexer: H = 64, D = 128, causal over S
(16384 unless given), HOPPER_CONFIG's fields replaced by the integers given.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa import D, D_QK, D_V, H, HEADS, TOPK, fp8, fp8_cache  # noqa: E402
from tilec.ops.dsa import indexer, sparse_mla_hopper, sparse_mla_seesaw  # noqa: E402
from tilec.ops.dsa.fp8_cache import scales_and_rope  # noqa: E402


def prefill_call(make, config, S=4096, S_kv=8192):
    q = torch.randn(S, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(S_kv, 1, D_QK, device="cuda", dtype=torch.bfloat16)
    visible = torch.arange(S_kv - S + 1, S_kv + 1, device="cuda")
    indices = (torch.rand(S, TOPK, device="cuda") * visible[:, None]).int()
    indices[:, ::7] = -1
    kernel = make(HEADS, D_V, D_QK - D_V, TOPK, D_QK ** -0.5, **config)
    return lambda: kernel(q, kv, indices)


def decode_call(form, batch=128, s_q=2):
    slots = batch * 64 * 64
    cache, _ = fp8_cache(slots)
    q = torch.randn(batch * s_q, HEADS, D_QK, device="cuda", dtype=torch.bfloat16)
    indices = torch.randint(0, slots, (batch * s_q, TOPK), device="cuda", dtype=torch.int32)
    if form[:1] == ["persistent"]:
        kernel = sparse_mla_hopper.sparse_mla_decode_hopper_kernel(s_q, HEADS, TOPK, D_QK ** -0.5, programs=int(form[1]),
                                                                   **sparse_mla_hopper.HOPPER_DECODE_CONFIG)
    elif form == ["seesaw"]:
        kernel = sparse_mla_seesaw.sparse_mla_decode_seesaw_kernel(s_q, HEADS, TOPK, D_QK ** -0.5,
                                                                   **sparse_mla_seesaw.SEESAW_CONFIG)
    else:
        kernel = sparse_mla_hopper.sparse_mla_decode_hopper_kernel(s_q, HEADS, TOPK, D_QK ** -0.5,
                                                                   split_dequant=form == ["split"],
                                                                   **sparse_mla_hopper.HOPPER_CONFIG)
    views = scales_and_rope(cache)
    return lambda: kernel(q, cache, *views, indices)


def indexer_call(S, fields):
    q, k = fp8((S, H, D)), fp8((S, D))
    k_scale, w = torch.rand(S, device="cuda") + 0.5, torch.randn(S, H, device="cuda")
    ks = torch.zeros(S, dtype=torch.int32, device="cuda")
    ke = torch.arange(1, S + 1, dtype=torch.int32, device="cuda")
    kernel = indexer.indexer_logits_kernel(H, D, **{**indexer.HOPPER_CONFIG, **fields})
    return lambda: kernel(q, k, k_scale, w, ks, ke)


def main(argv):
    if not argv or argv[0] not in ("prefill", "seesaw", "decode", "indexer") or (
            argv[0] == "decode" and argv[1:] not in ([], ["split"], ["seesaw"]) and not (
                argv[1:2] == ["persistent"] and len(argv) == 3 and argv[2].isdigit())):
        raise SystemExit(__doc__)
    torch.manual_seed(0)
    if argv[0] == "prefill":
        call = prefill_call(sparse_mla_hopper.sparse_mla_prefill_hopper_kernel, sparse_mla_hopper.HOPPER_CONFIG)
    elif argv[0] == "seesaw":
        call = prefill_call(sparse_mla_seesaw.sparse_mla_prefill_seesaw_kernel, sparse_mla_seesaw.SEESAW_CONFIG)
    elif argv[0] == "decode":
        call = decode_call(argv[1:])
    else:
        rest = argv[1:]
        S = int(rest.pop(0)) if rest and "=" not in rest[0] else 16384
        call = indexer_call(S, {key: int(value) for key, value in (field.split("=", 1) for field in rest)})
    for _ in range(2):
        call()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1:])
