"""TileLang's warp-specialized examples and DeepSeek-V3.2 kernels on tilec's CPU backend, against
float64: examples/warp_specialize/ (five GEMMs and a FlashMLA decode, warp-specialized by hand),
examples/deepseek_mla/example_mla_decode_ws.py (one split and two), and examples/deepseek_v32/'s
lightning indexer and two warp-specialized sparse MLA forwards. The
CPU runs their thread groups as fibers that take turns at their mbarriers.

    python bench/tilelang_cpu.py /path/to/tilelang

The argument is a TileLang checkout (or its examples/ folder). Each example is loaded with its
imports swapped (bench/tilelang_conformance.py's rule) and its kernel factory called on small
random inputs; nothing else of the file runs. Where torch is not installed, stand-ins let the
files import (the kernels use neither torch nor einops). Prints one line a kernel: its largest error
relative to the reference's largest magnitude (the indexer's logits are float32 sums of fp8
products; the other outputs are float16, which rounds to 4.9e-4, or bfloat16, to 3.9e-3).
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
    # The examples import torch, torch.nn.functional, einops and their torch-based utils at the
    # top and name torch dtypes in defaults; the kernels use none of them.
    def unavailable(module):
        def attribute(name):
            def call(*args, **kwargs):
                raise NotImplementedError(f"{module}.{name} needs torch")
            return call
        return attribute

    modules = {name: types.ModuleType(name) for name in ("torch", "torch.nn", "torch.nn.functional", "einops", "utils")}
    for name, module in modules.items():
        module.__getattr__ = unavailable(name)
    torch = modules["torch"]
    torch.__getattr__ = lambda name: name
    torch.Tensor = type("Tensor", (), {})
    torch.nn = modules["torch.nn"]
    torch.nn.functional = modules["torch.nn.functional"]
    sys.modules.update(modules)


def gemm(factory):
    def check(module, rng):
        M, N, K = 256, 256, 320
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        c = np.asarray(getattr(module, factory)(a, b, 128, 128, 64)).astype(np.float64)
        return np.abs(c - ref).max() / np.abs(ref).max()
    return check


def mla_decode(splits, scaled=False):
    def check(module, rng):
        # two sequences of 256 keys, 64 heads of 512 + 64 dims
        batch, heads, keys, dim, pe = 2, 64, 256, 512, 64
        q, q_pe = rng.standard_normal((batch, heads, dim)), rng.standard_normal((batch, heads, pe))
        kv, k_pe = rng.standard_normal((batch, keys, 1, dim)), rng.standard_normal((batch, keys, 1, pe))
        q, q_pe, kv, k_pe = (x.astype(np.float16) for x in (q, q_pe, kv, k_pe))
        scale = ((dim + pe) ** -0.5,) if scaled else ()
        kernel = module.flashattn(batch, heads, 1, keys, dim, pe, 64, 64, splits, *scale)
        out = np.asarray(kernel(q, q_pe, kv, k_pe, np.zeros((batch, heads, splits), np.float16),
                                np.zeros((batch, heads, splits, dim), np.float16))).astype(np.float64)
        return attention_error(out, q, q_pe, kv, k_pe)
    return check


def attention_error(out, q, q_pe, kv, k_pe):
    dim, pe = q.shape[-1], q_pe.shape[-1]
    wide = lambda x: x.astype(np.float64)  # noqa: E731
    scores = (np.einsum("bhd,bsd->bhs", wide(q), wide(kv[:, :, 0])) +
              np.einsum("bhd,bsd->bhs", wide(q_pe), wide(k_pe[:, :, 0]))) / np.sqrt(dim + pe)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    ref = np.einsum("bhs,bsd->bhd", p / p.sum(-1, keepdims=True), wide(kv[:, :, 0]))
    return np.abs(out - ref).max() / np.abs(ref).max()


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


KERNELS = [
    ("warp_specialize/example_warp_specialize_gemm_barrierpipe_stage2.py", gemm("matmul")),
    ("warp_specialize/example_warp_specialize_gemm_softpipe_stage2.py", gemm("matmul")),
    ("warp_specialize/example_warp_specialize_gemm_copy_0_gemm_1.py", gemm("matmul_warp_specialize_copy_0_gemm_1")),
    ("warp_specialize/example_warp_specialize_gemm_copy_1_gemm_0.py", gemm("matmul_warp_specialize_copy_1_gemm_0")),
    ("warp_specialize/example_warp_specialize_gemm_copy_gemm_0_1.py", gemm("matmul_warp_specialize_copy_gemm_0_1")),
    ("warp_specialize/example_warp_specialize_flashmla.py", mla_decode(1)),
    ("deepseek_mla/example_mla_decode_ws.py", mla_decode(1, scaled=True)),
    ("deepseek_mla/example_mla_decode_ws.py", mla_decode(2, scaled=True)),
    ("deepseek_v32/fp8_lighting_indexer.py", indexer),
    ("deepseek_v32/sparse_mla_fwd_pipelined.py", sparse_mla_fwd),
    ("deepseek_v32/sparse_mla_fwd_seesaw.py", sparse_mla_fwd),
]


def main():
    root = pathlib.Path(sys.argv[1])
    examples = root / "examples" if (root / "examples").is_dir() else root
    try:
        import torch  # noqa: F401
        sys.path.insert(0, str(examples / "deepseek_v32"))  # their utils
    except ImportError:
        stand_in_torch()
    with tempfile.TemporaryDirectory() as folder:
        for name, check in KERNELS:
            error = check(load(examples / name, pathlib.Path(folder)), np.random.default_rng(2))
            print(f"{name}: largest error {error:.2e} of the reference's largest")


if __name__ == "__main__":
    main()
