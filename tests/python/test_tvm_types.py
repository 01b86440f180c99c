"""tilec.tvm (TileLang programs' `from tilelang import tvm`): DataType, tirx's expression
helpers inside kernels (CPU run, NVRTC compile for sm_90a), and `tvm` naming it once tilec is
imported, as TileLang's import makes its own TVM importable."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import tvm
from tilec.tvm import tirx

from helpers import skip_without_nvrtc


def nibble_as_float(packed: tirx.PrimExpr, position: int, dtype: str):
    # In the manner of dequantize_gemm/quantize/quantization.py's converters (which shift and
    # mask: tilec's kernels have no runtime bit operators yet, so this divides).
    sixteen = tirx.const(16, "uint8")
    nibble = packed % sixteen if position == 0 else packed // sixteen
    return tirx.Cast(dtype, tirx.Min(nibble, tirx.const(7, "uint8")))


@T.prim_func
def unpack(P: T.Tensor((64,), "uint8"), Lo: T.Tensor((64,), "float32"),
           Hi: T.Tensor((64,), "float32"), Bits: T.Tensor((64,), "int32"),
           X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            Lo[i] = nibble_as_float(P[i], 0, "float32")
            Hi[i] = tvm.tirx.Select(P[i] > 127, nibble_as_float(P[i], 1, "float32"), -1.0)
            Bits[i] = tirx.reinterpret("int32", X[i])


def expected(p, x):
    lo = np.minimum(p & 15, 7).astype(np.float32)
    hi = np.where(p > 127, np.minimum(p >> 4, 7).astype(np.float32), np.float32(-1))
    return lo, hi, x.view(np.int32)


def test_tirx_helpers_in_a_kernel_on_the_cpu():
    p = np.arange(0, 256, 4, dtype=np.uint8)
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    lo, hi, bits = (np.zeros(64, np.float32), np.zeros(64, np.float32), np.zeros(64, np.int32))
    tilec.compile(unpack, target="cpu")(p, lo, hi, bits, x)
    for got, want in zip((lo, hi, bits), expected(p, x)):
        np.testing.assert_array_equal(got, want)


def test_tirx_helpers_compile_for_cuda():
    with skip_without_nvrtc():
        kernel = tilec.compile(unpack, target="cuda", arch="sm_90a")
    assert "__global__" in kernel.get_kernel_source()


def test_an_unknown_tirx_name_is_a_located_error():
    @T.prim_func
    def uses_floor(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            for i in T.Parallel(4):
                A[i] = tirx.floor(A[i])

    with pytest.raises(tilec.CompileError, match="tvm.tirx has no 'floor' usable in kernels"):
        tilec.compile(uses_floor, target="cpu")


def test_datatype_and_tir_names():
    assert tvm.DataType is tilec.DataType and tvm.DataType("float16").bits == 16
    assert tvm.tir is tvm.tirx


@pytest.mark.skipif(any(importlib.util.find_spec(name) is not None
                        and importlib.util.find_spec(name).origin != tvm.__file__
                        for name in ("tvm", "tilelang")),
                    reason="a TVM (or TileLang's) is installed: tilec leaves the name tvm to it")
def test_tvm_names_tilecs_module_once_tilec_is_imported():
    program = ("import tilec as tilelang\n"
               "from tvm import DataType\n"
               "from tvm import tirx\n"
               "import tvm.tir, tvm.testing\n"
               "print(DataType('bfloat16').bits, tirx.__name__, tvm.tir.__name__,\n"
               "      tvm.testing.requires_package.__module__)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["16", "tilec.tvm.tirx", "tilec.tvm.tirx", "tilec.testing"]


@T.prim_func
def dot_in_float32(A: T.Tensor((16,), "float16"), B: T.Tensor((16,), "int8"),
                   C: T.Tensor((1,), "float32")):
    # As gemv/example_gemv.py accumulates: TVM's PrimExpr.astype on elements and values.
    with T.Kernel(1, threads=1) as bx:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for k in T.serial(16):
            acc[0] += A[k].astype("float32") * (B[k] + 1).astype(dtype=T.float32)
        C[0] = acc[0]


def test_astype_is_a_cast():
    a = np.linspace(-1, 1, 16).astype(np.float16)
    b = np.arange(-8, 8, dtype=np.int8)
    c = np.zeros(1, np.float32)
    tilec.compile(dot_in_float32, target="cpu")(a, b, c)
    np.testing.assert_allclose(c[0], np.dot(a.astype(np.float64), b + 1.0), rtol=1e-5)


def test_astype_of_a_buffer_is_an_error():
    @T.prim_func
    def whole(A: T.Tensor((4,), "float16"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            B[0] = A.astype("float32")

    with pytest.raises(tilec.CompileError, match="has no attribute 'astype' .values have it"):
        tilec.compile(whole, target="cpu")
