"""TileLang's pass-config keys (tilec.PassConfigKey, "tl.*" strings): those with a tilec meaning
build what the tilec switch builds, the rest are accepted without effect (and logged at DEBUG),
unknown tilec keys stay errors; and fast math ("tl.enable_fast_math", "tilec.fast_math"), which
compiles CUDA with NVRTC's --use_fast_math. The CUDA checks need NVRTC only, no GPU."""

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import PassConfigKey, _core

from test_hopper import ARCH, emit, matmul


@T.prim_func
def exp2_of(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = T.exp2(A[bx * 128 + i]) / A[bx * 128 + i]


def test_keys_are_tilelangs():
    assert PassConfigKey.TL_ENABLE_FAST_MATH.value == "tl.enable_fast_math"
    assert PassConfigKey.TL_DISABLE_TMA_LOWER == "tl.disable_tma_lower"
    assert PassConfigKey.TL_DISABLE_WARP_SPECIALIZED.value == "tl.disable_warp_specialized"
    assert PassConfigKey.TIR_DISABLE_VECTORIZE.value == "tirx.disable_vectorize"
    import tilec.transform

    assert tilec.transform.PassConfigKey is PassConfigKey


@pytest.mark.parametrize("tilelang, tilec_switch", [
    ({PassConfigKey.TL_DISABLE_TMA_LOWER: True}, {"tilec.tma": False}),
    ({"tl.disable_warp_specialized": True}, {"tilec.warp_specialize": False}),
    ({PassConfigKey.TL_DISABLE_WGMMA: True}, {"tilec.wgmma": False}),
])
def test_a_key_with_a_tilec_meaning_builds_what_the_switch_builds(tilelang, tilec_switch):
    mapped = emit(matmul(512, 512, 512), "source", tilelang)
    assert mapped == emit(matmul(512, 512, 512), "source", tilec_switch)
    assert mapped != emit(matmul(512, 512, 512), "source")


def test_false_keeps_the_default():
    assert emit(matmul(512, 512, 512), "source", {PassConfigKey.TL_DISABLE_TMA_LOWER: False}) == \
        emit(matmul(512, 512, 512), "source")


def test_keys_without_effect_are_accepted_and_logged(capfd):
    configs = {PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True,
               PassConfigKey.TL_PTXAS_REGISTER_USAGE_LEVEL: 10,
               PassConfigKey.TL_SIMPLIFY: {"enable_simplify_let_inline": False},
               "tl.a_key_of_a_later_tilelang": True}
    tilec.set_log_level("DEBUG")
    try:
        kernel = tilec.compile(exp2_of, target="cpu", pass_configs=configs)
    finally:
        tilec.set_log_level("WARNING")
    err = capfd.readouterr().err
    for key in configs:
        text = key.value if isinstance(key, PassConfigKey) else key
        assert f"pass config '{text}' (TileLang's) has no effect in tilec" in err
    assert emit(exp2_of, "source", configs) == emit(exp2_of, "source")
    a = np.linspace(1, 2, 256, dtype=np.float32)
    b = np.empty_like(a)
    kernel(a, b)
    np.testing.assert_allclose(b, np.exp2(a) / a, rtol=1e-6)


def test_unknown_tilec_keys_and_namespaces_stay_errors():
    with pytest.raises(ValueError, match="unknown pass config 'tilec.fastmath' .tilec reads: "):
        tilec.compile(exp2_of, target="cpu", pass_configs={"tilec.fastmath": True})
    with pytest.raises(ValueError, match="unknown pass config 'enable_fast_math'"):
        tilec.compile(exp2_of, target="cpu", pass_configs={"enable_fast_math": True})


def test_a_mapped_key_takes_a_switch_and_agrees_with_tilecs():
    with pytest.raises(ValueError, match="'tl.enable_fast_math' is a switch: True or False, not 'fast'"):
        tilec.compile(exp2_of, target="cpu", pass_configs={"tl.enable_fast_math": "fast"})
    with pytest.raises(ValueError, match="set 'tilec.tma' two ways"):
        tilec.compile(matmul(512, 512, 512), target="cuda", arch=ARCH,
                      pass_configs={"tilec.tma": True, PassConfigKey.TL_DISABLE_TMA_LOWER: True})


# --- fast math ---------------------------------------------------------------------------------

def test_fast_math_is_off_by_default_as_in_tilelang():
    ptx = emit(exp2_of, "ptx")
    assert "ex2.approx.ftz.f32" not in ptx and "div.rn.f32" in ptx


@pytest.mark.parametrize("configs", [{PassConfigKey.TL_ENABLE_FAST_MATH: True},
                                     {"tilec.fast_math": True}])
def test_fast_math_approximates_exp2_and_division_and_flushes_denormals(configs):
    ptx = emit(exp2_of, "ptx", configs)
    assert "ex2.approx.ftz.f32" in ptx and "div.approx.ftz.f32" in ptx
    assert "div.rn.f32" not in ptx
    # the source is the same: only NVRTC's options differ
    assert emit(exp2_of, "source", configs) == emit(exp2_of, "source")


def test_the_old_disable_fast_math_key_keeps_it_off():
    assert emit(exp2_of, "ptx", {PassConfigKey.TL_DISABLE_FAST_MATH: True}) == emit(exp2_of, "ptx")


def test_fast_math_has_no_effect_on_the_cpu(capfd):
    tilec.set_log_level("DEBUG")
    try:
        kernel = tilec.compile(exp2_of, target="cpu", pass_configs={"tilec.fast_math": True})
    finally:
        tilec.set_log_level("WARNING")
    assert "pass config 'tilec.fast_math' has no effect on target 'cpu'" in capfd.readouterr().err
    a = np.linspace(1, 2, 256, dtype=np.float32)
    b = np.empty_like(a)
    kernel(a, b)
    np.testing.assert_allclose(b, np.exp2(a) / a, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_fast_math_kernel_runs_close_to_the_exact_one():
    torch = pytest.importorskip("torch")
    a = torch.linspace(1, 2, 256, device="cuda")
    exact, fast = torch.empty_like(a), torch.empty_like(a)
    tilec.compile(exp2_of, target="cuda")(a, exact)
    tilec.compile(exp2_of, target="cuda", pass_configs={"tl.enable_fast_math": True})(a, fast)
    torch.testing.assert_close(fast, exact, rtol=1e-5, atol=0)
    torch.testing.assert_close(exact, torch.exp2(a) / a)
