"""TileLang's DeepSeek-V3.2 kernels (examples/deepseek_v32/) on tilec's CPU backend, against
float64: the lightning indexer, and the two warp-specialized sparse MLA forwards, whose thread
groups the CPU runs as fibers that take turns at their mbarriers.

    python bench/tilelang_dsa_cpu.py /path/to/tilelang

The argument is a TileLang checkout (or its examples/ folder). Each example is loaded with its
imports swapped (bench/tilelang_conformance.py's rule) and its kernel factory called on small
random inputs; nothing else of the file runs. Where torch is not installed, a stand-in lets
the files import (the kernels don't use it). Prints one line a kernel: its largest error
relative to the reference's largest magnitude (the indexer's logits are float32 sums of fp8
products; the attention outputs bfloat16, which rounds to 3.9e-3).
"""

import importlib.util
import pathlib
import sys
import tempfile
import types

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tilelang_conformance as conformance  # noqa: E402


def load(path, folder):
    swapped, _ = conformance.swap_imports(path.read_text())
    copy = folder / (path.stem + "_swapped.py")
    copy.write_text(swapped)
    spec = importlib.util.spec_from_file_location(copy.stem, copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stand_in_torch():
    # The examples import torch and their torch-based utils at the top and name torch dtypes in
    # defaults; the kernels use neither.
    torch = types.ModuleType("torch")
    torch.Tensor = type("Tensor", (), {})
    torch.__getattr__ = lambda name: name
    utils = types.ModuleType("utils")

    def unavailable(name):
        def call(*args, **kwargs):
            raise NotImplementedError(f"utils.{name} needs torch")
        return call

    utils.__getattr__ = unavailable
    sys.modules.update(torch=torch, utils=utils)


def indexer(module, rng):
    S, S_kv, H, D = 40, 200, 32, 64
    q = rng.uniform(-1, 1, (S * H, D)).astype(ml_dtypes.float8_e4m3fn)
    k = rng.uniform(-1, 1, (S_kv, D)).astype(ml_dtypes.float8_e4m3fn)
    k_scale = rng.uniform(0.5, 2, (S_kv,)).astype(np.float32)
    w = rng.uniform(-1, 1, (S, H)).astype(np.float32)
    ks = np.zeros(S, np.int32)
    ke = np.minimum(np.arange(S, dtype=np.int32) + 161, S_kv).astype(np.int32)
    logits = np.asarray(module.mqa_attn_return_logits(q, k, k_scale, w, ks, ke, block_N=64, num_stages=1,
                                                      threads=128))
    scores = np.einsum("shd,nd->shn", q.astype(np.float64).reshape(S, H, D), k.astype(np.float64))
    ref = (np.maximum(scores, 0) * w[:, :, None]).sum(1) * k_scale[None, :]
    inside = np.arange(S_kv)[None, :] < ke[:, None]
    return np.abs(np.where(inside, logits - ref, 0)).max() / np.abs(np.where(inside, ref, 0)).max()


def sparse_mla_fwd(module, rng):
    # kv_stride 1 and q_start 0: token s keeps the indices <= s; distinct indices a row, 0 among
    # them, so every row keeps one
    S, S_kv, H, topk = 5, 300, 64, 256
    q = rng.uniform(-1, 1, (1, S, H, 576)).astype(ml_dtypes.bfloat16)
    kv = rng.uniform(-1, 1, (1, S_kv, 1, 576)).astype(ml_dtypes.bfloat16)
    indices = np.stack([rng.permutation(S_kv)[:topk] for _ in range(S)]).astype(np.int32)
    indices[:, 0] = 0
    keys = kv[0, indices, 0].astype(np.float64)
    scores = np.einsum("shd,skd->shk", q[0].astype(np.float64), keys) * 576 ** -0.5
    scores = np.where((indices <= np.arange(S)[:, None])[:, None, :], scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    ref = np.einsum("shk,skd->shd", p / p.sum(-1, keepdims=True), keys[..., :512])
    out, _ = module.sparse_mla_fwd(q, kv, indices.reshape(1, S, 1, topk), np.zeros(1, np.int32), H, 512, 64, topk,
                                   1, 1, None, True, True)
    return np.abs(np.asarray(out)[0].astype(np.float64) - ref).max() / np.abs(ref).max()


KERNELS = [("fp8_lighting_indexer.py", indexer), ("sparse_mla_fwd_pipelined.py", sparse_mla_fwd),
           ("sparse_mla_fwd_seesaw.py", sparse_mla_fwd)]


def main():
    root = pathlib.Path(sys.argv[1])
    examples = (root / "examples" if (root / "examples").is_dir() else root) / "deepseek_v32"
    try:
        import torch  # noqa: F401
        sys.path.insert(0, str(examples))  # their utils
    except ImportError:
        stand_in_torch()
    with tempfile.TemporaryDirectory() as folder:
        for name, check in KERNELS:
            error = check(load(examples / name, pathlib.Path(folder)), np.random.default_rng(2))
            print(f"{name}: largest error {error:.2e} of the reference's largest")


if __name__ == "__main__":
    main()
