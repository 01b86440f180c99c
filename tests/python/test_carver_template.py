"""tilec.carver.template.MatmulTemplate and tilec.carver.roller (TileLang's carver as
gemm/example_gemm_autotune.py uses it): tile hints for a Hopper and an Ampere description,
turned into the example's configs, and the template's equivalent kernel run on the CPU."""

from types import SimpleNamespace

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec.carver.roller.rasterization import NoRasterization, Rasterization2DColumn
from tilec.carver.template import MatmulTemplate

from helpers import skip_without_nvrtc

H200 = SimpleNamespace(platform="CUDA", sm_version=90, compute_max_core=132, warp_size=32,
                       smem_cap=48 * 1024, max_smem_usage=96 * 1024, reg_cap=65536)
A100 = SimpleNamespace(platform="CUDA", sm_version=80, compute_max_core=108, warp_size=32,
                       smem_cap=48 * 1024, max_smem_usage=96 * 1024, reg_cap=65536)

SMEM_LIMIT = {90: 227 * 1024, 80: 163 * 1024}


def example_configs(hints):
    """What the example makes of each hint."""
    configs = []
    for hint in hints:
        block_m, block_n = hint.block
        warp_m, warp_n = hint.warp
        configs.append({"block_M": block_m, "block_N": block_n, "block_K": hint.rstep[0],
                        "num_stages": hint.pipeline_stage if hint.pipeline_stage > 1 else 0,
                        "thread_num": (block_m // warp_m) * (block_n // warp_n) * 32,
                        "enable_rasteration": hint.rasterization_plan is not NoRasterization})
    return configs


def template(M=4096, N=4096, K=4096, arch=H200):
    return MatmulTemplate(M=M, N=N, K=K, in_dtype=T.float16, out_dtype=T.float16,
                          accum_dtype=T.float32).with_arch(arch)


@pytest.mark.parametrize("arch", [H200, A100], ids=["sm_90", "sm_80"])
def test_hints_fit_the_device(arch):
    hints = template(arch=arch).recommend_hints(topk=20)
    assert 1 <= len(hints) <= 20
    for hint, config in zip(hints, example_configs(hints)):
        assert hint.use_tc and hint.arch is arch
        stage = (config["block_M"] + config["block_N"]) * config["block_K"] * 2
        epilogue = config["block_M"] * config["block_N"] * 2
        assert hint.pipeline_stage * stage + epilogue <= SMEM_LIMIT[arch.sm_version]
        assert config["thread_num"] in (128, 256)
        # the float32 accumulator: at most 128 registers a thread
        assert config["block_M"] * config["block_N"] / config["thread_num"] <= 128
        if arch.sm_version >= 90:
            assert config["block_M"] % 64 == 0 and config["block_K"] == 64


def test_hopper_leads_with_a_large_warpgroup_tile():
    best = example_configs(template().recommend_hints(topk=3))[0]
    assert (best["block_M"] * best["block_N"], best["block_K"]) == (128 * 256, 64)
    assert best["thread_num"] == 256 and best["num_stages"] >= 2


def test_small_problems_get_small_tiles_and_no_panels():
    hints = template(M=16, N=256, K=512).recommend_hints(topk=5)
    assert all(h.block[0] == 64 and h.block[1] <= 256 for h in hints)
    assert all(isinstance(h.rasterization_plan, NoRasterization) for h in hints)
    big = template().recommend_hints(topk=1)[0]
    assert isinstance(big.rasterization_plan, Rasterization2DColumn)
    assert big.rasterization_plan.panel_width == 10


def test_bad_shapes_and_devices_are_errors():
    with pytest.raises(ValueError, match="MatmulTemplate: K is a positive int, not 0"):
        MatmulTemplate(M=16, N=16, K=0)
    with pytest.raises(ValueError, match="recommends tensor-core tiles for CUDA and CDNA"):
        template(arch=SimpleNamespace(platform="CPU", compute_max_core=8)).recommend_hints()


@pytest.mark.parametrize("trans_A, trans_B, with_bias",
                         [(False, True, False), (True, False, True), (False, False, False)])
def test_the_equivalent_function_computes_the_gemm(trans_A, trans_B, with_bias):
    M, N, K = 70, 96, 48
    spec = MatmulTemplate(M=M, N=N, K=K, trans_A=trans_A, trans_B=trans_B, in_dtype="float32",
                          out_dtype="float32", accum_dtype="float32", with_bias=with_bias)
    kernel = tilec.compile(spec.equivalent_function(), target="cpu")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((K, M) if trans_A else (M, K)).astype(np.float32)
    b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    expected = (a.T if trans_A else a).astype(np.float64) @ (b.T if trans_B else b)
    if with_bias:
        bias = rng.standard_normal(N).astype(np.float32)
        kernel(a, b, bias, c)
        expected = expected + bias
    else:
        kernel(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)


def test_the_equivalent_function_compiles_for_cuda():
    spec = template(M=256, N=256, K=128)
    with skip_without_nvrtc():
        kernel = tilec.compile(spec.equivalent_function(), target="cuda", arch="sm_90a")
    assert [p.name for p in kernel.params] == ["A", "B", "C"]
