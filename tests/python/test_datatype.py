"""tilec.DataType (TileLang programs' tvm.DataType): widths, lanes, names and equality."""

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import DataType


def test_bits_of_the_types_tileLang_programs_size_loads_with():
    assert DataType("float16").bits == 16
    assert DataType(T.bfloat16).bits == 16
    assert DataType("float8_e4m3fn").bits == 8
    assert DataType(T.int8).bits == 8 and DataType("int32").bits == 32
    assert DataType("float64").bits == 64 and DataType("bool").bits == 8
    # dequantize_gemm/example_dequant_gemv_fp16xint4.py: 128 // DataType(in_dtype).bits
    assert 128 // DataType(T.float16).bits == 8


def test_library_dtypes_and_aliases():
    assert DataType(np.float32) == "float32"
    assert DataType(np.dtype("int16")).bits == 16
    assert DataType("half") == DataType("float16") == T.float16
    torch = pytest.importorskip("torch")
    assert DataType(torch.bfloat16) == "bfloat16" and DataType(torch.float8_e5m2).bits == 8


def test_vector_types():
    vector = DataType("float16x4")
    assert (vector.bits, vector.lanes, vector.itemsize) == (16, 4, 8)
    assert str(vector) == "float16x4" and vector.element == T.float16
    assert vector.with_lanes(1) == "float16" and DataType("int8").with_lanes(16) == "int8x16"
    assert vector != "float16" and hash(vector) == hash(DataType("float16x4"))


def test_unknown_types_are_errors():
    with pytest.raises(ValueError, match="tilec has no element type named 'int4'"):
        DataType("int4")
    with pytest.raises(TypeError, match="T.dtype takes an element type name"):
        DataType(3)


def test_a_datatype_is_a_dtype_in_kernels():
    dtype = DataType("float32")

    @T.prim_func
    def copy(A: T.Tensor((8,), dtype), B: T.Tensor((8,), dtype)):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                B[i] = A[i]

    a = np.arange(8, dtype=np.float32)
    b = np.zeros_like(a)
    tilec.compile(copy, target="cpu")(a, b)
    np.testing.assert_array_equal(a, b)


@tilec.jit(target="cpu")
def lanes_of(X, dtype="float16"):
    # As gemv/example_gemv.py sizes its tiles in the kernel's body.
    N = T.const("N")
    X: T.Tensor((N,), dtype)
    Y = T.empty((2,), "int32")
    TILE_K = 128 // DataType(dtype).bits
    with T.Kernel(1, threads=1) as bx:
        Y[0] = TILE_K
        Y[1] = tilec.DataType(X.dtype).bits
    return Y


@pytest.mark.parametrize("dtype, lanes", [("float16", 8), ("float32", 4), ("int8", 16)])
def test_datatype_inside_kernels(dtype, lanes):
    y = lanes_of(np.zeros(4, dtype), dtype)
    assert list(y) == [lanes, 128 // lanes]
