"""T.dtype: what it takes (names and aliases, torch and numpy dtypes), the canonical name it
holds, and as_torch() / as_numpy()."""

import importlib.util

import ml_dtypes
import numpy as np
import pytest

import tilec.language as T


@pytest.mark.parametrize("value, name", [("float16", "float16"), ("half", "float16"),
                                         ("float8_e4m3fn", "float8_e4m3"), (T.bfloat16, "bfloat16"),
                                         (np.float32, "float32"), (np.dtype("int8"), "int8"),
                                         (np.dtype(ml_dtypes.bfloat16), "bfloat16")])
def test_dtype_holds_the_canonical_name(value, name):
    dtype = T.dtype(value)
    assert isinstance(dtype, T.dtype) and dtype == name and repr(dtype) == f"T.{name}"


def test_tvm_c_style_names():
    # TileLang's T.int, T.uint, T.short, T.long (its quantize helpers' signatures use them).
    assert (T.int, T.uint, T.short, T.long) == ("int32", "uint32", "int16", "int64")
    assert [T.dtype(n) for n in ("int", "uint", "short", "long")] == ["int32", "uint32", "int16", "int64"]


def test_dtype_of_a_torch_dtype():
    torch = pytest.importorskip("torch")
    assert T.dtype(torch.float16) == "float16" and T.dtype(torch.int64) == "int64"


def test_dtype_refuses_what_is_no_element_type():
    with pytest.raises(ValueError, match="no element type named 'float128'"):
        T.dtype("float128")
    with pytest.raises(TypeError, match="not a list"):
        T.dtype([1])


@pytest.mark.parametrize("name, expected", [("float16", np.float16), ("bool", np.bool_),
                                            ("uint32", np.uint32),
                                            ("bfloat16", ml_dtypes.bfloat16),
                                            ("float8_e4m3", ml_dtypes.float8_e4m3fn),
                                            ("float8_e5m2", ml_dtypes.float8_e5m2)])
def test_as_numpy(name, expected):
    assert T.dtype(name).as_numpy() == np.dtype(expected)


def test_as_torch():
    torch = pytest.importorskip("torch")
    assert T.float16.as_torch() is torch.float16
    assert T.dtype("bfloat16").as_torch() is torch.bfloat16
    assert T.bool.as_torch() is torch.bool
    if hasattr(torch, "float8_e4m3fn"):
        assert T.float8_e4m3fn.as_torch() is torch.float8_e4m3fn


# --- tilec.language.fp8 ------------------------------------------------------------------------

def test_determine_fp8_type_on_cuda_or_without_torch(monkeypatch):
    from tilec.language import fp8

    if importlib.util.find_spec("torch") is not None:
        import torch

        monkeypatch.setattr(torch.version, "hip", None)
    assert fp8.determine_fp8_type() == T.float8_e4m3 == "float8_e4m3"
    assert fp8.determine_fp8_type("e5m2") == T.float8_e5m2
    with pytest.raises(ValueError, match="fp8_format 'e3m4' is neither 'e4m3' nor 'e5m2'"):
        fp8.determine_fp8_type("e3m4")


def test_determine_fp8_type_on_rocm_before_gfx950_has_no_tilec_type(monkeypatch):
    torch = pytest.importorskip("torch")
    from tilec.language import fp8

    monkeypatch.setattr(torch.version, "hip", "6.2")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="uses float8_e4m3fnuz, which tilec has no type for"):
        fp8.determine_fp8_type()
