"""tilec.utils.tensor: the tensors get_tensor_supply makes for kernel parameters, and
torch_assert_close on numpy arrays (and torch tensors where torch is installed)."""

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

import tilec.utils
from tilec.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close


def param(dtype, shape=(64, 64), name="A", is_tensor=True):
    return SimpleNamespace(name=name, dtype=dtype, shape=list(shape), is_tensor=is_tensor)


def values(supply_type, dtype, shape=(64, 64)):
    tensor = get_tensor_supply(supply_type, device="cpu")(param(dtype, shape))
    assert tuple(tensor.shape) == tuple(shape)
    if type(tensor).__module__.startswith("torch"):
        import torch

        return tensor.to(torch.float64).numpy()
    return np.asarray(tensor, dtype=np.float64)


@pytest.mark.parametrize("dtype, expected", [("float32", {-2, -1, 0, 1, 2}),
                                             ("int32", {-2, -1, 0, 1, 2}),
                                             ("uint8", {0, 1, 2}), ("bool", {0, 1})])
def test_integer_draws_small_integers(dtype, expected):
    assert set(np.unique(values(TensorSupplyType.Integer, dtype))) == expected


def _torch_lacks_float8():
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return not hasattr(torch, "float8_e4m3fn")


@pytest.mark.skipif(_torch_lacks_float8(), reason="this torch has no float8 types (torch 2.1 has)")
def test_integer_float8_draws_from_the_int8_range():
    drawn = values(TensorSupplyType.Integer, "float8_e4m3", (128, 128))
    assert drawn.min() <= -100 and drawn.max() >= 100 and np.all(drawn == np.round(drawn))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_uniform_lies_in_minus_one_to_one(dtype):
    drawn = values(TensorSupplyType.Uniform, dtype)
    assert drawn.min() >= -1 and drawn.max() <= 1 and len(np.unique(drawn)) > 100


def test_normal_has_mean_minus_one_and_randn_mean_zero():
    normal = values(TensorSupplyType.Normal, "float32", (256, 256))
    randn = values(TensorSupplyType.Randn, "float32", (256, 256))
    assert abs(normal.mean() + 1) < 0.02 and abs(normal.std() - 1) < 0.02
    assert abs(randn.mean()) < 0.02 and abs(randn.std() - 1) < 0.02


def test_zero_and_one():
    assert np.all(values(TensorSupplyType.Zero, "float16") == 0)
    assert np.all(values(TensorSupplyType.One, "int64") == 1)


def test_uniform_and_normal_give_int8_ones():
    assert np.all(values(TensorSupplyType.Uniform, "int8") == 1)
    assert np.all(values(TensorSupplyType.Normal, "int8") == 1)


def test_auto_is_uniform_for_floats_and_integers_for_the_rest():
    floats = values(TensorSupplyType.Auto, "float16")
    assert floats.min() >= -1 and floats.max() <= 1 and len(np.unique(floats)) > 100
    assert set(np.unique(values(TensorSupplyType.Auto, "int32"))) == {-2, -1, 0, 1, 2}
    assert set(np.unique(values(TensorSupplyType.Auto, "float64"))) == {-2, -1, 0, 1, 2}


def test_the_supplied_dtype_is_the_parameters():
    tensor = get_tensor_supply(TensorSupplyType.Auto, device="cpu")(param("bfloat16"))
    assert "bfloat16" in str(tensor.dtype)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                    reason="with torch installed, tensors are torch's")
def test_numpy_supplies_follow_numpys_seed():
    np.random.seed(7)
    first = values(TensorSupplyType.Randn, "float32")
    np.random.seed(7)
    assert np.array_equal(first, values(TensorSupplyType.Randn, "float32"))


def test_a_symbolic_dim_or_a_scalar_is_an_error_naming_the_parameter():
    supply = get_tensor_supply(device="cpu")
    with pytest.raises(ValueError, match="parameter 'A' has the symbolic dim 'n'"):
        supply(param("float32", (4, "n")))
    with pytest.raises(ValueError, match="parameter 'alpha' is a scalar"):
        supply(param("float32", (), name="alpha", is_tensor=False))


def test_supply_types_are_tilelangs():
    assert [t.name for t in TensorSupplyType] == ["Integer", "Uniform", "Normal", "Randn",
                                                 "Zero", "One", "Auto"]
    assert tilec.utils.TensorSupplyType is TensorSupplyType
    assert tilec.utils.torch_assert_close is torch_assert_close


# --- torch_assert_close -----------------------------------------------------------------------

def test_close_enough_passes():
    a = np.linspace(1, 2, 100, dtype=np.float32)
    assert torch_assert_close(a, a * (1 + 1e-3)) is True


def test_too_many_mismatches_fail_with_the_first_and_the_largest():
    a = np.zeros((10, 10), dtype=np.float32)
    b = a.copy()
    b[2, 3], b[5, 5] = 1.0, 3.0
    with pytest.raises(AssertionError) as error:
        torch_assert_close(a, b, max_mismatched_ratio=0.01, base_name="mine", ref_name="theirs")
    text = str(error.value)
    assert "Too many mismatched elements: 2 > 1" in text
    assert "First mismatch at index [2, 3]: lhs=0.000000, rhs=1.000000" in text
    assert "Greatest absolute difference: 3.0" in text
    assert "\nmine: " in text and "\ntheirs: " in text
    assert torch_assert_close(a, b, max_mismatched_ratio=0.02)


def test_tolerances_are_atol_plus_rtol_times_the_reference():
    a, b = np.array([1.0]), np.array([1.1])
    with pytest.raises(AssertionError):
        torch_assert_close(a, b, rtol=0.05, atol=0.04, max_mismatched_ratio=0)
    assert torch_assert_close(a, b, rtol=0.05, atol=0.06, max_mismatched_ratio=0)


def test_attributes_must_match():
    a = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(AssertionError, match="'shape' do not match"):
        torch_assert_close(a, np.ones((3, 2), dtype=np.float32))
    with pytest.raises(AssertionError, match="'dtype' do not match: float32 != float16"):
        torch_assert_close(a, a.astype(np.float16))
    assert torch_assert_close(a, a.astype(np.float16), check_dtype=False)
    with pytest.raises(AssertionError, match="'stride\\(\\)' do not match"):
        torch_assert_close(a, np.asfortranarray(a), check_stride=True)


def test_nans_are_equal_unless_told_otherwise():
    a = np.array([np.nan, 1.0])
    assert torch_assert_close(a, a.copy(), max_mismatched_ratio=0)
    with pytest.raises(AssertionError, match="1 > 0"):
        torch_assert_close(a, a.copy(), equal_nan=False, max_mismatched_ratio=0)


def test_integers_compare_exactly():
    a = np.array([2**40 + 1], dtype=np.int64)
    with pytest.raises(AssertionError):
        torch_assert_close(a, a - 1, rtol=0, atol=0, max_mismatched_ratio=0)


def test_torch_tensors_and_numpy_arrays_compare():
    torch = pytest.importorskip("torch")
    a = torch.linspace(0, 1, 50)
    assert torch_assert_close(a, a.clone())
    assert torch_assert_close(a, a.numpy().copy())
    with pytest.raises(AssertionError, match="Too many mismatched"):
        torch_assert_close(a, a + 1)
