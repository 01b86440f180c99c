"""Runs TileLang's MLA decode kernel once under one pass-config variant and prints its max error
against the program's ref_program: the probe that found the warp-specialized hang (twelfth
session, bench/RESULTS.md). Each variant in its own process under a timeout, so a hang fails one:

    for v in default nows notma nowgmma; do
      timeout 25 python3 bench/mla_decode_probe.py SWAPPED/deepseek_mla example_mla_decode $v 2 1024
    done

SWAPPED is TileLang's examples/ after bench/tilelang_conformance.py's import swap
(copy_swapped); MODULE is example_mla_decode, or example_mla_decode_kv_fp8 with MODULE_DIR
SWAPPED/deepseek_mla/experimental.
"""

import importlib
import inspect
import sys
import time

import torch

VARIANTS = {
    "default": {},
    "nows": {"tl.disable_warp_specialized": True},
    "notma": {"tl.disable_tma_lower": True},
    "nowgmma": {"tl.disable_wgmma": True},
}
HEADS, DIM, PE_DIM, BLOCK_N, BLOCK_H = 128, 512, 64, 64, 64


def main(module_dir, module_name, variant, batch=2, kv_ctx=1024):
    sys.path.insert(0, module_dir)
    program = importlib.import_module(module_name)
    program.flashattn.pass_configs.update(VARIANTS[variant])
    args = [batch, HEADS, 1, kv_ctx, DIM, PE_DIM, BLOCK_N, BLOCK_H]
    if "num_split" in inspect.signature(program.flashattn).parameters:
        args += [1, (DIM + PE_DIM) ** -0.5]
    kernel = program.flashattn(*args)
    q = torch.randn(batch, HEADS, DIM, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, HEADS, PE_DIM, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, kv_ctx, 1, DIM, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, kv_ctx, 1, PE_DIM, dtype=torch.float16, device="cuda")
    if "fp8" in module_name:
        kv = kv.to(torch.float8_e4m3fn)
    start = time.time()
    out = kernel(q, q_pe, kv, k_pe)
    torch.cuda.synchronize()
    ref = program.ref_program(q, q_pe, kv.to(torch.float16), k_pe)
    error = (out.float() - ref.float()).abs().max().item()
    print(f"{module_name} {variant}: ran in {time.time() - start:.3f} s, max error {error:.4f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:6]))
