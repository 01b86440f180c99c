"""The ways of writing and calling a jit kernel, and the Kernel object's API."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)


def matmul_reference(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ b64, np.abs(a64) @ np.abs(b64)


# --- lazy style: a factory returning a @T.prim_func ---------------------------------

def _lazy_matmul(M, N, K, block_M=32, block_N=32, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float32")
            B_s = T.alloc_shared((block_K, block_N), "float32")
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


lazy_out = jit(out_idx=[-1])(_lazy_matmul)
lazy_in_place = jit(_lazy_matmul)


def test_lazy_with_out_idx_returns_the_output(rng):
    kernel = lazy_out(48, 40, 70)
    assert isinstance(kernel, tilec.Kernel)
    a, b = rand((48, 70), "float32", rng), rand((70, 40), "float32", rng)
    c = kernel(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (48, 40)
    expected, scale = matmul_reference(a, b)
    assert_close(c, expected, "float32", scale=scale)


def test_lazy_without_out_idx_writes_in_place(rng):
    kernel = lazy_in_place(48, 40, 70)
    a, b = rand((48, 70), "float32", rng), rand((70, 40), "float32", rng)
    c = poison((48, 40), "float32")
    assert kernel(a, b, c) is None
    expected, scale = matmul_reference(a, b)
    assert_close(c, expected, "float32", scale=scale)


def test_factory_building_its_kernel_through_a_helper_function(rng):
    # TileLang's block-sparse attention: the factory defines kernel_func(block, ...), which
    # defines the prim_func, and returns what kernel_func returns.
    @jit(out_idx=[-1])
    def scaled(n, factor):
        def kernel_func(block, threads):
            @T.prim_func
            def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
                with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
                    for i in T.Parallel(block):
                        if bx * block + i < n:
                            B[bx * block + i] = A[bx * block + i] * factor

            return main

        return kernel_func(64, 64)

    assert scaled.style == "factory"
    a = rand(100, "float32", rng)
    assert_close(scaled(100, 3.0)(a), a * 3.0, "float32", exact=True)


def test_decorator_with_arguments(rng):
    @jit(out_idx=[-1])
    def double(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(n):
                    B[i] = A[i] * 2

        return main

    a = rand(24, "float32", rng)
    assert_close(double(24)(a), a * 2.0, "float32", exact=True)


def test_call_form_jit_of_a_function(rng):
    # The seed's debugging form: kernel = tilelang.jit(my_func, target=...)
    jitted = jit(_lazy_matmul)
    kernel = jitted(32, 32, 32)
    a, b = rand((32, 32), "float32", rng), rand((32, 32), "float32", rng)
    c = poison((32, 32), "float32")
    kernel(a, b, c)
    expected, scale = matmul_reference(a, b)
    assert_close(c, expected, "float32", scale=scale)


# --- a factory that defines one @T.prim_func and returns nothing --------------------

@jit
def factory_returning_none(n, scale):
    @T.prim_func
    def scaled(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 16), threads=128) as bx:
            for i in T.Parallel(16):
                if bx * 16 + i < n:
                    Y[bx * 16 + i] = X[bx * 16 + i] * scale


def test_factory_that_returns_nothing_compiles_its_prim_func(rng):
    kernel = factory_returning_none(40, 3.0)
    assert isinstance(kernel, tilec.Kernel)
    x, y = rand(40, "float32", rng), poison(40, "float32")
    kernel(x, y)
    assert_close(y, x.astype(np.float64) * 3, "float32")


# --- eager style: the jit function's body is the kernel --------------------------

@jit
def eager_matmul(A, B, block_M: int = 32):
    M, K = T.const("M, K")
    N = T.const("N")
    A: T.Tensor((M, K), "float32")
    B: T.Tensor((K, N), "float32")
    C = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, 32), "float32")
        B_s = T.alloc_shared((32, 32), "float32")
        C_f = T.alloc_fragment((block_M, 32), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[by * block_M, k * 32], A_s)
            T.copy(B[k * 32, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * 32])
    return C


@pytest.mark.parametrize("M,N,K,block_M", [(64, 64, 32, 16), (50, 33, 70, 32)])
def test_eager_call_compiles_and_returns_the_output(M, N, K, block_M, rng):
    a, b = rand((M, K), "float32", rng), rand((K, N), "float32", rng)
    c = eager_matmul(a, b, block_M)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (M, N)
    expected, scale = matmul_reference(a, b)
    assert_close(c, expected, "float32", scale=scale)
    # A second call with the same shapes reuses the compiled kernel: same result.
    a2 = rand((M, K), "float32", rng)
    expected2, scale2 = matmul_reference(a2, b)
    assert_close(eager_matmul(a2, b, block_M), expected2, "float32", scale=scale2)


def test_eager_default_constant(rng):
    a, b = rand((40, 20), "float32", rng), rand((20, 24), "float32", rng)
    expected, scale = matmul_reference(a, b)
    assert_close(eager_matmul(a, b), expected, "float32", scale=scale)


def test_eager_compile_returns_a_kernel(rng):
    kernel = eager_matmul.compile(M=64, N=64, K=32, block_M=16)
    assert isinstance(kernel, tilec.Kernel)
    assert eager_matmul.compile(M=64, N=64, K=32, block_M=16) is kernel
    a, b = rand((64, 32), "float32", rng), rand((32, 64), "float32", rng)
    c = kernel(a, b)
    expected, scale = matmul_reference(a, b)
    assert_close(c, expected, "float32", scale=scale)
    # TileLang's compile takes the call's own arguments too (sparse_mla_fwd.compile(q, kv, ...)).
    from_arguments = eager_matmul.compile(a, b, 16)
    assert from_arguments.get_kernel_source() == kernel.get_kernel_source()
    assert eager_matmul.compile(a, b, block_M=16) is from_arguments
    assert_close(from_arguments(a, b), expected, "float32", scale=scale)


@jit
def eager_pool_rows(X, pool: int = 2, block: int = 4):
    # As TileLang's convolution and block-sparse GEMM do: dims computed with before the
    # declaration that binds them.
    M, N = T.const("M, N")
    OM = M // pool
    X: T.Tensor((M, N), "float32")
    Y = T.empty((OM, N), "float32")
    with T.Kernel(T.ceildiv(OM, block), threads=32) as bx:
        for i, j in T.Parallel(block, N):
            if bx * block + i < OM:
                Y[bx * block + i, j] = 0.0
                for p in T.serial(pool):
                    Y[bx * block + i, j] = Y[bx * block + i, j] + X[(bx * block + i) * pool + p, j]
    return Y


def test_eager_const_dim_used_before_the_tensor_that_binds_it(rng):
    # Each new row count compiles anew: the kernel records the dims it was made for.
    for rows, pool in ((12, 2), (12, 3), (18, 2), (12, 2)):
        x = rand((rows, 5), "float32", rng)
        y = eager_pool_rows(x, pool)
        assert y.shape == (rows // pool, 5)
        assert_close(y, x.astype(np.float64).reshape(rows // pool, pool, 5).sum(axis=1), "float32")


@jit
def eager_segment_scale(X, sizes=(2, 3, 1), scales=(1.0, -2.0, 3.0)):
    # Python's builtins over compile-time values, in the body and in the kernel.
    total = sum(sizes)
    X: T.Tensor((total,), "float32")
    Y = T.empty((total,), "float32")
    with T.Kernel(1, threads=32) as bx:
        for i, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
            start = sum(sizes[:i])
            for j in T.serial(size):
                Y[start + j] = X[start + j] * (scale if all(sizes) and not any(()) else 0.0)
    return Y


@pytest.mark.parametrize("sizes,scales", [((2, 3, 1), (1.0, -2.0, 3.0)), ((4,), (0.5,))])
def test_eager_python_builtins_over_constants(sizes, scales, rng):
    x = rand((sum(sizes),), "float32", rng)
    expected = x.astype(np.float64) * np.repeat(scales, sizes)
    assert_close(eager_segment_scale(x, sizes, scales), expected, "float32")


@jit
def eager_padded_groups(X, sizes=(3, 1, 6), block: int = 4):
    # TileLang's grouped GEMM: the grid and the groups' offsets from comprehensions.
    total = sum(sizes)
    starts = [sum(sizes[:g]) for g in range(len(sizes))]
    tiles = [(size + block - 1) // block for size in sizes]
    X: T.Tensor((total,), "float32")
    Y = T.empty((sum(tiles) * block,), "float32")
    with T.Kernel(sum(t for t in tiles), threads=32) as bx:
        for g, (start, size) in enumerate(zip(starts, sizes)):
            first_tile = sum(tiles[:g])
            if bx >= first_tile and bx < first_tile + tiles[g]:
                for i in T.serial(block):
                    row = (bx - first_tile) * block + i
                    Y[bx * block + i] = T.if_then_else(row < size, X[start + row], 0.0)
    return Y


def test_eager_comprehensions_over_constants(rng):
    sizes, block = (3, 1, 6), 4
    x = rand((sum(sizes),), "float32", rng)
    groups = np.split(x, np.cumsum(sizes)[:-1])
    expected = np.concatenate([np.pad(g, (0, -len(g) % block)) for g in groups])
    assert_close(eager_padded_groups(x, sizes, block), expected, "float32")


@jit
def seed_style_add(M, N):
    A = T.Tensor[(M, N), "float32"]
    B = T.Tensor[(M, N), "float32"]
    C = T.Tensor[(M, N), "float32"]

    with T.Kernel(T.ceildiv(M, 16), T.ceildiv(N, 16)) as (bx, by):
        A_s = T.alloc_shared((16, 16), "float32")
        B_f = T.alloc_fragment((16, 16), "float32")
        T.copy(A[bx * 16, by * 16], A_s)
        T.copy(B[bx * 16, by * 16], B_f)
        for i, j in T.Parallel(16, 16):
            B_f[i, j] = B_f[i, j] - A_s[i, j] * 2
        T.copy(B_f, C[bx * 16, by * 16])


def test_seed_style_tensors_declared_in_the_body(rng):
    # All parameters are constants; the tensors are the body's T.Tensor[...]
    # declarations, taken in declaration order and written in place.
    kernel = seed_style_add(40, 24)
    assert isinstance(kernel, tilec.Kernel)
    a, b = rand((40, 24), "float32", rng), rand((40, 24), "float32", rng)
    c = poison((40, 24), "float32")
    assert kernel(a, b, c) is None
    assert_close(c, b.astype(np.float64) - a * 2.0, "float32")


# --- TileLang code, its kernel unchanged -----------------------------------------

@jit(out_idx=[-1])
def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def gemm_relu(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        # Initialize Kernel Context
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)

            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                # Copy tile of A
                T.copy(A[by * block_M, ko * block_K], A_shared)

                # Copy tile of B
                T.copy(B[ko * block_K, bx * block_N], B_shared)

                # Perform a tile-level GEMM on the shared buffers
                T.gemm(A_shared, B_shared, C_local)

            # relu
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)

            # Copy result back to global memory
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_relu


def test_tilelang_code_runs_unchanged(rng):
    M, N, K = 96, 64, 80
    kernel = matmul(M, N, K, 64, 32, 32)
    a, b = rand((M, K), "float16", rng), rand((K, N), "float16", rng)
    c = kernel(a, b)
    assert c.dtype == np.float16
    expected, _ = matmul_reference(a, b)
    # Accumulated in float32, rounded once to float16 by the final copy.
    assert_close(c, np.maximum(expected, 0), "float16")


# --- caching and the Kernel API ------------------------------------------------

def test_same_arguments_give_the_same_kernel_object():
    k1 = lazy_in_place(32, 32, 32)
    assert lazy_in_place(32, 32, 32) is k1
    assert lazy_in_place(32, 32, 64) is not k1
    assert factory_returning_none(40, 3.0) is factory_returning_none(40, 3.0)
    # By position or by name, the same arguments; 3 and 3.0 are not the same constant.
    k2 = factory_returning_none(40, 3.0)
    assert factory_returning_none(n=40, scale=3.0) is k2
    assert factory_returning_none(40, scale=3.0) is k2
    assert factory_returning_none(40, 3) is not k2


def test_kernel_source_and_ir():
    kernel = lazy_in_place(64, 32, 32, block_M=16)
    src = kernel.get_kernel_source()
    assert isinstance(src, str) and src.strip()
    assert kernel.get_source() == src
    ir = kernel.get_ir()
    assert isinstance(ir, str) and ir.strip()
    # A different kernel has different generated code.
    other = lazy_in_place(64, 32, 32, block_M=32).get_kernel_source()
    assert other != src


def test_jit_get_kernel_source_takes_the_calls_arguments(rng):
    # A factory's arguments, by position or name, as TileLang's examples pass them.
    kernel = lazy_in_place(64, 32, 32, block_M=16)
    assert lazy_in_place.get_kernel_source(64, 32, 32, block_M=16) == kernel.get_kernel_source()
    assert lazy_in_place.get_source(M=64, N=32, K=32, block_M=16) == kernel.get_kernel_source()
    # An eager kernel's tensors and constants, or its constants with the T.const dims by name.
    a, b = rand((64, 32), "float32", rng), rand((32, 64), "float32", rng)
    from_tensors = eager_matmul.get_kernel_source(a, b, 16)
    assert from_tensors == eager_matmul.compile(M=64, N=64, K=32, block_M=16).get_kernel_source()
    assert eager_matmul.get_kernel_source(M=64, N=64, K=32, block_M=16) == from_tensors
    assert eager_matmul.get_kernel_source(a, b, 32) != from_tensors


def test_package_attributes():
    assert isinstance(tilec.__version__, str) and re.match(r"\d+\.\d+", tilec.__version__)
    assert issubclass(tilec.CompileError, Exception)


def test_debug_log_level_shows_stage_timings(capfd):
    capfd.readouterr()
    tilec.set_log_level("DEBUG")
    try:
        # Constants no other test uses, so this compiles afresh.
        lazy_in_place(23, 17, 9, block_M=16, block_N=16, block_K=16)
    finally:
        tilec.set_log_level("WARNING")
    err = capfd.readouterr().err
    timed = [line for line in err.splitlines()
             if re.search(r"\d(\.\d+)?\s*(s|sec|seconds|ms|us|µs)\b", line)]
    assert len(timed) >= 2, f"expected stage timing lines on stderr, got:\n{err}"
