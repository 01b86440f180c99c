"""jit(compile_flags=...) and compile(compile_flags=...), TileLang's nvcc flags: those NVRTC
understands reach it, --use_fast_math is the fast-math switch, nvcc's own are accepted with no
effect (logged at DEBUG), an unknown or arch flag is an error. The CUDA checks need NVRTC only,
no GPU."""

import sys

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import capture, _core
from tilec.jit import core_pass_configs

from helpers import skip_without_nvrtc

ARCH = "sm_90a"

# deepseek_mla/example_mla_decode_ws.py's list.
TILELANG_EXAMPLE_FLAGS = [
    "-O3", "-Wno-deprecated-declarations", "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr", "--expt-extended-lambda",
    "--ptxas-options=-v,--register-usage-level=10", "-DNDEBUG",
]


@T.prim_func
def scaled_exp2(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = T.exp2(A[bx * 128 + i]) / A[bx * 128 + i]


def emit(func, stage, compile_flags=(), pass_configs=None):
    source, filename, first_line, name, bindings = capture.function_value(func.func, func.source,
                                                                          func.scope)
    with skip_without_nvrtc():
        return _core.emit(source, filename, first_line, name, bindings, "cuda", ARCH,
                          core_pass_configs(pass_configs), stage, list(compile_flags))


def compile_cuda(func, **kw):
    with skip_without_nvrtc():
        return tilec.compile(func, target="cuda", arch=ARCH, **kw)


def run_on_cpu(kernel):
    a = np.linspace(1, 2, 256, dtype=np.float32)
    b = np.empty_like(a)
    kernel(a, b)
    np.testing.assert_allclose(b, np.exp2(a) / a, rtol=1e-6)


def test_the_flags_of_tilelangs_examples_compile_for_cuda(capfd):
    tilec.set_log_level("DEBUG")
    try:
        kernel = compile_cuda(scaled_exp2, compile_flags=TILELANG_EXAMPLE_FLAGS)
    finally:
        tilec.set_log_level("WARNING")
    err = capfd.readouterr().err
    for flag in ("-O3", "-Wno-deprecated-declarations", "--expt-relaxed-constexpr",
                 "--expt-extended-lambda"):
        assert f"compile flag '{flag}' has no effect under NVRTC" in err
    options = next(line for line in err.splitlines() if "tilec_scaled_exp2.cu options:" in line).split()
    assert "--ptxas-options=-v" in options and "--ptxas-options=--register-usage-level=10" in options
    # ptxas ran with -v: its report is NVRTC's log. With torch loaded in the process, NVRTC 13.0
    # returned an empty log on the H100 machine (2026-12-06), the same compile giving the report
    # without torch.
    if "torch" not in sys.modules:
        assert "ptxas info" in err and "Compiling entry function" in err
    assert kernel.arch == ARCH


def test_use_fast_math_is_the_fast_math_switch():
    fast = emit(scaled_exp2, "ptx", compile_flags=["--use_fast_math"])
    assert "ex2.approx.ftz.f32" in fast and "div.approx.ftz.f32" in fast
    assert fast == emit(scaled_exp2, "ptx", pass_configs={"tilec.fast_math": True})
    assert "div.rn.f32" in emit(scaled_exp2, "ptx", compile_flags=["-DNDEBUG"])


def test_fast_math_flag_and_a_false_switch_disagree():
    with pytest.raises(ValueError, match="compile flag '--use_fast_math' and pass config "
                                         "'tilec.fast_math'.* = false disagree"):
        tilec.compile(scaled_exp2, target="cpu", compile_flags=["--use_fast_math"],
                      pass_configs={"tl.disable_fast_math": True})


def test_nvrtc_options_reach_nvrtc():
    # IEEE division without them, NVRTC's full-range division with them (not fast math's)
    assert "div.rn.f32" in emit(scaled_exp2, "ptx")
    ptx = emit(scaled_exp2, "ptx", compile_flags=["--ftz=true", "--prec-div=false"])
    assert "div.full.ftz.f32" in ptx and "div.rn.f32" not in ptx


def test_a_string_is_split_as_a_shell_would(capfd):
    tilec.set_log_level("DEBUG")
    try:
        kernel = tilec.compile(scaled_exp2, target="cpu", compile_flags="-O3 -Xptxas -v")
    finally:
        tilec.set_log_level("WARNING")
    err = capfd.readouterr().err
    assert "compile flag '-O3' has no effect under NVRTC" in err
    assert "compile flag '--ptxas-options=-v' has no effect on target 'cpu'" in err
    run_on_cpu(kernel)


def test_jit_keeps_the_flags_and_the_cpu_ignores_them():
    @tilec.jit(target="cpu", compile_flags=TILELANG_EXAMPLE_FLAGS)
    def copy_kernel(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    B[i] = A[i]

        return main

    assert copy_kernel.compile_flags == tuple(TILELANG_EXAMPLE_FLAGS)
    a = np.arange(8, dtype=np.float32)
    b = np.zeros_like(a)
    copy_kernel(8)(a, b)
    np.testing.assert_array_equal(a, b)


def test_bad_flags_are_errors_naming_them():
    with pytest.raises(ValueError, match="compile flag '-arch=sm_80' is not accepted: tilec builds "
                                         "for the compile's arch"):
        tilec.compile(scaled_exp2, target="cpu", compile_flags=["-arch=sm_80"])
    with pytest.raises(ValueError, match="compile flag '--frobnicate' is not one tilec knows"):
        tilec.compile(scaled_exp2, target="cpu", compile_flags=["--frobnicate"])
    with pytest.raises(TypeError, match="compile_flags is a list of str or a str, not a dict"):
        tilec.jit(scaled_exp2, compile_flags={"-O3": True})
    with pytest.raises(TypeError, match="compile_flags holds str flags, not 3"):
        tilec.jit(scaled_exp2, compile_flags=["-O", 3])
