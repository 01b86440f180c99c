"""TILEC_BOUNDS_CHECK / pass_configs={"tilec.bounds_check": True}: an access out of
bounds stops with an error naming the tensor, the index, the shape and the kernel
line, and touches no memory it doesn't own."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import cpu_only, poison, rand, rng  # noqa: F401  (rng is a fixture)

pytestmark = cpu_only("bounds checks instrument the C++ that the CPU backend generates")


def shifted_store(n, checked):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(n):
                B[i + 1] = A[i]  # the last iteration writes B[n]

    config = {"tilec.bounds_check": True} if checked else None
    return tilec.jit(main, target="cpu", pass_configs=config)


def test_out_of_bounds_store_is_reported_with_tensor_index_and_line(rng):
    kernel = shifted_store(8, checked=True)
    a = rand(8, "float32", rng)
    b = np.zeros(9, np.float32)  # one guard element after the 8 the kernel may touch
    b_view = b[:8]
    with pytest.raises(RuntimeError) as info:
        kernel(a, b_view)
    message = str(info.value)
    assert "index [8] is out of bounds for shape (8) of 'B'" in message
    assert "test_bounds_check.py:" in message and "B[i + 1] = A[i]" in message
    assert b[8] == 0, "the out-of-bounds store reached memory"
    np.testing.assert_array_equal(b_view[1:], a[:7])


def test_in_bounds_kernel_runs_normally_with_checks(rng):
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(2) as bx:
            s = T.alloc_shared((8,), "float32")
            T.copy(A[bx * 8], s)
            for i in T.Parallel(8):
                B[bx * 8 + i] = s[i] * 2.0

    kernel = tilec.jit(main, target="cpu", pass_configs={"tilec.bounds_check": True})
    assert "tilec_rt::checked" in kernel.get_kernel_source()
    a, b = rand(16, "float32", rng), poison(16, "float32")
    kernel(a, b)
    np.testing.assert_allclose(b, a * 2)


def test_checks_are_off_by_default():
    assert "tilec_rt::checked" not in shifted_store(4, checked=False).get_kernel_source()
