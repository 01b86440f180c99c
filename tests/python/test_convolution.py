"""A 2-D convolution as TileLang's example writes it: T.im2col fills a shared tile of the image's
im2col matrix, and the filter and output are read and written through views of another shape
(T.Tensor(shape, dtype, x.data)). On the backend under test, against a float64 NumPy convolution."""

import numpy as np
import pytest

import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401
from test_errors import compile_error

HERE = __file__


@jit
def convolution(N, C, H, W, F, K, S, D, P, block_M=64, block_N=64, block_K=32, dtype="float32"):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), dtype), kernel: T.Tensor((K, K, C, F), dtype),
             out: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), "float32")
            kernel_flat = T.Tensor((K * K * C, F), dtype, kernel.data)
            out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)
            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=2):
                T.im2col(data, data_shared, by, k_iter, K, S, D, P)
                T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)
            T.copy(out_local, out_flat[by * block_M, bx * block_N])

    return main


def reference(x, w, S, D, P):
    """x (N, H, W, C), w (K, K, C, F) -> (N, OH, OW, F), in float64."""
    N, H, W, C = x.shape
    K, _, _, F = w.shape
    xp = np.zeros((N, H + 2 * P, W + 2 * P, C))
    xp[:, P:P + H, P:P + W] = x
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    out = np.zeros((N, OH, OW, F))
    for kh in range(K):
        for kw in range(K):
            patch = xp[:, kh * D:kh * D + S * (OH - 1) + 1:S, kw * D:kw * D + S * (OW - 1) + 1:S, :]
            out += patch @ w[kh, kw]
    return out


@pytest.mark.parametrize("N,C,H,W,F,K,S,D,P", [(2, 16, 8, 8, 64, 3, 1, 1, 1), (1, 8, 9, 7, 32, 3, 2, 1, 0),
                                               (2, 4, 10, 10, 16, 2, 1, 2, 1)])
def test_convolution_by_im2col_and_views(rng, N, C, H, W, F, K, S, D, P):
    x = rand((N, H, W, C), "float32", rng)
    w = rand((K, K, C, F), "float32", rng)
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    out = poison((N, OH, OW, F), "float32")
    convolution(N, C, H, W, F, K, S, D, P)(x, w, out)
    assert_close(out, reference(x.astype(np.float64), w.astype(np.float64), S, D, P), "float32",
                 scale=np.sqrt(K * K * C))


def test_a_view_needs_a_contiguous_tensor(rng):
    kernel = convolution(1, 8, 9, 7, 32, 3, 2, 1, 0)
    x = rand((1, 9, 7, 8), "float32", rng)
    w = np.ascontiguousarray(rand((3, 3, 32, 8), "float32", rng).transpose(0, 1, 3, 2))  # a copy: fine
    out = poison((1, 4, 3, 32), "float32")
    kernel(x, w, out)
    assert_close(out, reference(x.astype(np.float64), w.astype(np.float64), 2, 1, 0), "float32", scale=np.sqrt(72))
    strided = rand((3, 3, 8, 64), "float32", rng)[:, :, :, ::2]
    with pytest.raises(ValueError, match="argument 'kernel' must have stride 768 in dim 0 .*pass a contiguous copy"):
        kernel(x, strided, out)


@jit
def view_of_another_size():
    @T.prim_func
    def main(A: T.Tensor((16, 8), "float32")):
        with T.Kernel(1, threads=128) as bx:
            flat = T.Tensor((64,), "float32", A.data)  # ERR:view-size
            flat[0] = 1.0

    return main


@jit
def view_of_another_dtype():
    @T.prim_func
    def main(A: T.Tensor((16, 8), "float32")):
        with T.Kernel(1, threads=128) as bx:
            flat = T.Tensor((128,), "int32", A.data)  # ERR:view-dtype
            flat[0] = 1

    return main


@pytest.mark.parametrize("factory,marker,words", [
    (view_of_another_size, "ERR:view-size", ["a view of 'A' has its 128 elements, not 64"]),
    (view_of_another_dtype, "ERR:view-dtype", ["has its dtype, not int32"]),
])
def test_views_of_another_size_or_dtype_are_errors(factory, marker, words):
    check_diagnostic(compile_error(factory), HERE, marker, *words)
