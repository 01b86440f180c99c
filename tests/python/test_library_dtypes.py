"""torch and NumPy dtypes wherever a kernel takes a dtype: a factory's or an eager kernel's
argument, T.Tensor annotations, T.alloc_* and T.cast; a value that is no dtype is a located
error naming it."""

import importlib.util

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as T

HAS_TORCH = importlib.util.find_spec("torch") is not None


@tilec.jit(out_idx=[-1], target="cpu")
def doubled(M, dtype="float32", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            staged = T.alloc_shared((M,), dtype)
            acc = T.alloc_fragment((M,), accum_dtype)
            T.copy(A, staged)
            for i in T.Parallel(M):
                acc[i] = T.cast(staged[i], accum_dtype) * 2
            for i in T.Parallel(M):
                B[i] = T.cast(acc[i], dtype)

    return main


@tilec.jit(target="cpu")
def eager_plus_one(A, B, dtype="float32"):
    M = T.const("M")
    A: T.Tensor[(M,), dtype]
    B: T.Tensor[(M,), dtype]
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(M):
            B[i] = A[i] + T.cast(1, dtype)


def library_dtypes():
    cases = [(np.float16, np.float64, "float16"), (np.dtype("float32"), np.dtype("float64"), "float32"),
             (np.dtype(ml_dtypes.bfloat16), np.float32, "bfloat16")]
    if HAS_TORCH:
        import torch

        cases += [(torch.float16, torch.float32, "float16"), (torch.float32, torch.float64, "float32")]
    return cases


@pytest.mark.parametrize("dtype, accum_dtype, name", library_dtypes())
def test_a_factory_takes_library_dtypes(dtype, accum_dtype, name):
    kernel = doubled(32, dtype=dtype, accum_dtype=accum_dtype)
    assert [p.dtype for p in kernel.params] == [name, name]
    a = np.linspace(-2, 2, 32).astype(T.dtype(name).as_numpy())
    np.testing.assert_array_equal(np.asarray(kernel(a), dtype=np.float64),
                                  2 * a.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float64, np.dtype("int32")])
def test_an_eager_kernel_takes_numpy_dtypes(dtype):
    a = np.arange(8).astype(dtype)
    b = np.zeros_like(a)
    eager_plus_one(a, b, dtype=dtype)
    np.testing.assert_array_equal(b, a + 1)


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_an_eager_kernel_takes_torch_dtypes():
    import torch

    a = torch.arange(8, dtype=torch.float32)
    b = torch.zeros_like(a)
    eager_plus_one(a, b, dtype=torch.float32)
    assert torch.equal(b, a + 1)


def test_a_value_that_is_no_dtype_is_a_located_error():
    with pytest.raises(tilec.CompileError) as error:
        doubled(32, dtype=3)
    text = str(error.value)
    assert "tensor dtype must be a dtype" in text and "torch.float16" in text and "not int" in text
    assert "def main(A: T.Tensor((M,), dtype)" in text
    with pytest.raises(tilec.CompileError, match="free variable 'accum_dtype' is a Python value of "
                                                  "type 'dtype complex64'"):
        doubled(32, accum_dtype=np.complex64)
