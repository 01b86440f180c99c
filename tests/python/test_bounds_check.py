"""Bounds checks: TILEC_BOUNDS_CHECK, or pass_configs={"tilec.bounds_check": True}.

On the CPU an access out of bounds stops the call with an error naming the tensor, the
index, the shape and the kernel line, and touches no memory it doesn't own. On CUDA the
kernel checks its global and shared accesses on the device: the first one out of bounds
prints the same description and traps, and the call fails with an error that carries it.
A trap leaves the CUDA context unusable for the rest of the process, so the GPU tests run
their kernels in a fresh Python process. Without a GPU, the CUDA side is checked through the
source it generates and NVRTC compiling it for sm_90a."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core

from helpers import cpu_only, line_of, poison, rand, rng, skip_without_nvrtc  # noqa: F401  (rng is a fixture)

CPU_ONLY = cpu_only("these run the C++ that the CPU backend generates")
ARCH = "sm_90a"
TRUE_SPELLINGS = ["1", "true", "TRUE", "yes", "Yes", "on", "ON"]
FALSE_SPELLINGS = ["", "0", "false", "False", "no", "NO", "off", "Off"]


@pytest.fixture(autouse=True)
def no_bounds_check_in_the_environment(monkeypatch):
    monkeypatch.delenv("TILEC_BOUNDS_CHECK", raising=False)


def shifted_store(n, checked, target="cpu", arch=None):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(n):
                B[i + 1] = A[i]  # the last iteration writes B[n]

    config = None if checked is None else {"tilec.bounds_check": checked}
    return tilec.jit(main, target=target, arch=arch, pass_configs=config)


def is_checked(kernel):
    return "tilec_rt::checked" in kernel.get_kernel_source()


# --- the CPU backend -----------------------------------------------------------

@CPU_ONLY
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


@CPU_ONLY
def test_in_bounds_kernel_runs_normally_with_checks(rng):
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(2) as bx:
            s = T.alloc_shared((8,), "float32")
            T.copy(A[bx * 8], s)
            for i in T.Parallel(8):
                B[bx * 8 + i] = s[i] * 2.0

    kernel = tilec.jit(main, target="cpu", pass_configs={"tilec.bounds_check": True})
    assert is_checked(kernel)
    a, b = rand(16, "float32", rng), poison(16, "float32")
    kernel(a, b)
    np.testing.assert_allclose(b, a * 2)


@CPU_ONLY
def test_checks_are_off_by_default():
    assert not is_checked(shifted_store(4, checked=None))


@CPU_ONLY
@pytest.mark.parametrize("value", TRUE_SPELLINGS)
def test_environment_turns_checks_on_with_any_true_spelling(monkeypatch, value):
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", value)
    assert is_checked(shifted_store(4, checked=None))


@CPU_ONLY
@pytest.mark.parametrize("value", FALSE_SPELLINGS)
def test_environment_turns_checks_off_with_any_false_spelling(monkeypatch, value):
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", value)
    assert not is_checked(shifted_store(4, checked=None))


@pytest.mark.parametrize("value", ["2", "y", "enable", "true!"])
def test_environment_value_that_is_no_switch_is_an_error(monkeypatch, value):
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", value)
    with pytest.raises(ValueError) as info:
        shifted_store(4, checked=None).compile()
    assert str(info.value) == (f"TILEC_BOUNDS_CHECK='{value}' is not a switch: set it to 1, "
                               f"true, yes or on, or to 0, false, no, off or nothing")


@CPU_ONLY
def test_pass_config_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", "1")
    assert not is_checked(shifted_store(4, checked=False))
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", "0")
    assert is_checked(shifted_store(4, checked=True))


# The general variant (for unaligned or strided tensors) is built by the first call that needs
# it, after the environment may have changed: it is built as the kernel was, checked.
@CPU_ONLY
def test_general_variant_is_checked_like_the_kernel(monkeypatch, rng):
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", "1")
    kernel = shifted_store(8, checked=None).compile()
    monkeypatch.delenv("TILEC_BOUNDS_CHECK")
    a = rand(8, "float32", rng)
    b = np.zeros(10, np.float32)
    with pytest.raises(RuntimeError, match=r"index \[8\] is out of bounds for shape \(8\) of 'B'"):
        kernel(a, b[1:9])  # 4 bytes past 16-byte alignment: the general variant
    assert b[9] == 0, "the out-of-bounds store reached memory"


# --- CUDA, without a GPU: the generated source, compiled by NVRTC -----------------

@pytest.fixture
def nvrtc():
    """Skips where NVRTC can't be loaded."""
    with skip_without_nvrtc():
        shifted_store(4, checked=None, target="cuda", arch=ARCH).compile()


@T.prim_func
def reverse_halves(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        s = T.alloc_shared((128,), "float32")
        for i in T.Parallel(128):
            s[i] = A[bx * 128 + i]
        for i in T.Parallel(128):
            B[bx * 128 + i] = s[127 - i]  # shared, read by another thread


def test_cuda_kernel_checks_its_global_and_shared_accesses(nvrtc):
    source = tilec.compile(reverse_halves, target="cuda", arch=ARCH,
                           pass_configs={"tilec.bounds_check": True}).get_kernel_source()
    assert '#include "cuda/bounds_check.h"' in source
    marker = "# shared, read by another thread"
    line = f"{__file__}:{line_of(marker, __file__)}: B[bx * 128 + i] = s[127 - i]  {marker}"
    # The element, the kernel, the tensor and line, then each dim's index and extent.
    assert (f'tilec_cuda::checked(&B[bx * 128 + (tx & 127)], "reverse_halves", "\'B\' at {line}", '
            f'bx * 128 + (tx & 127), 256)') in source
    assert (f'tilec_cuda::checked(&s[127 - (tx & 127)], "reverse_halves", "\'s\' at {line}", '
            f'127 - (tx & 127), 128)') in source


def test_cuda_kernel_is_unchecked_by_default(nvrtc):
    source = tilec.compile(reverse_halves, target="cuda", arch=ARCH).get_kernel_source()
    assert "bounds_check.h" not in source and "tilec_cuda::checked" not in source


@T.prim_func
def copy_to_rank(A: T.Tensor((2, 64), "float32"), rank: T.int32):
    with T.Kernel(2, threads=64, cluster_dims=2) as bx:
        s = T.alloc_shared((64,), "float32")
        bar = T.alloc_cluster_barrier([1])
        T.copy(A[bx, :], s)
        T.copy_cluster(s, s, dst_block=rank)  # the rank a thread reaches
        T.mbarrier_arrive(bar[0], cta_id=rank)
        T.cluster_sync()
        T.copy(s, A[bx, :])


def test_cuda_kernel_checks_the_peer_block_ranks_it_reaches(nvrtc):
    # A rank read at run time, outside the cluster, would reach another SM's shared memory: each
    # store to a peer and each arrival at a peer's barrier checks it against the cluster's blocks
    source = tilec.compile(copy_to_rank, target="cuda", arch=ARCH,
                           pass_configs={"tilec.bounds_check": True}).get_kernel_source()
    site = f"the peer block rank at {__file__}:{line_of('# the rank a thread reaches', __file__)}:"
    assert f'tilec_cuda::checked_block_rank(rank, 2, "copy_to_rank", "{site}' in source, source
    assert re.search(r"copy_to_block<16>\([^;]*tilec_cuda::checked_block_rank\(rank, 2,", source), source
    assert re.search(r"mbarrier_arrive_in_block\([^;]*tilec_cuda::checked_block_rank\(rank, 2,", source), source
    unchecked = tilec.compile(copy_to_rank, target="cuda", arch=ARCH).get_kernel_source()
    assert "checked_block_rank" not in unchecked


# Tile operations predicate their own accesses, and a predicated-off cp.async may carry an
# address past the end of its tensor: the addresses they pass to device calls stay unchecked.
def test_cuda_tile_operation_addresses_are_not_checked(nvrtc):
    @T.prim_func
    def copy_rows(A: T.Tensor((100, 40), "float16"), B: T.Tensor((100, 40), "float16")):
        with T.Kernel(T.ceildiv(100, 32), threads=128) as bx:
            s = T.alloc_shared((32, 40), "float16")
            T.copy(A[bx * 32, 0], s)
            T.copy(s, B[bx * 32, 0])

    source = tilec.compile(copy_rows, target="cuda", arch="sm_80",
                           pass_configs={"tilec.bounds_check": True}).get_kernel_source()
    device_calls = [line for line in source.splitlines() if "tilec_cuda::cp_async" in line
                    or "tilec_cuda::load_vector" in line or "tilec_cuda::store_vector" in line]
    assert device_calls, source
    for line in device_calls:
        assert "tilec_cuda::checked" not in line, line


def test_checked_and_unchecked_cubins_are_cached_apart(nvrtc, monkeypatch, tmp_path):
    @T.prim_func
    def cached_twice(A: T.Tensor((64,), "float32")):  # a kernel no other test builds
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                A[i] = A[i] + 1.0

    def source():
        return tilec.compile(cached_twice, target="cuda", arch=ARCH).get_kernel_source()

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    assert "tilec_cuda::checked" not in source()
    monkeypatch.setenv("TILEC_BOUNDS_CHECK", "on")
    assert "tilec_cuda::checked" in source()
    assert len(list((tmp_path / "cuda").glob("*.cubin"))) == 2


KERNEL_FILE = textwrap.dedent("""\
    import tilec.language as T

    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(8):
                B[i + 1] = A[i]  # OUT OF BOUNDS
    """)


def cli(tmp_path, *args, bounds_check):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL_FILE)
    env = dict(os.environ, TILEC_BOUNDS_CHECK=bounds_check)
    command = [sys.executable, "-c", "import sys; from tilec._cli import main; sys.exit(main())",
               "compile", str(path), "--func", "main", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("arch", ["sm_80", ARCH])
def test_cuda_checks_compile_to_a_printf_and_a_trap(nvrtc, tmp_path, arch):
    done = cli(tmp_path, "--target", "cuda", "--arch", arch, "--emit", "ptx", bounds_check="yes")
    assert done.returncode == 0, done.stderr
    assert "trap;" in done.stdout and "vprintf" in done.stdout
    assert ".global .align 8 .u64 tilec_bounds_report;" in done.stdout
    unchecked = cli(tmp_path, "--target", "cuda", "--arch", arch, "--emit", "ptx",
                    bounds_check="no")
    assert unchecked.returncode == 0, unchecked.stderr
    assert "trap;" not in unchecked.stdout and "tilec_bounds_report" not in unchecked.stdout


def test_cuda_source_names_kernel_tensor_and_line(tmp_path):
    done = cli(tmp_path, "--target", "cuda", "--emit", "source", bounds_check="1")
    assert done.returncode == 0, done.stderr
    site = f"'B' at {tmp_path / 'kernel.py'}:7: B[i + 1] = A[i]  # OUT OF BOUNDS"
    assert f'tilec_cuda::checked(&B[i + 1], "main", "{site}", i + 1, 8)' in done.stdout


def test_cli_names_the_variable_that_is_no_switch(tmp_path):
    done = cli(tmp_path, "--target", "cpu", "--emit", "source", bounds_check="sure")
    assert done.returncode != 0
    assert "TILEC_BOUNDS_CHECK='sure' is not a switch" in done.stderr


# --- CUDA on a GPU, each in a fresh process --------------------------------------

GPU_PRELUDE = textwrap.dedent("""\
    import numpy as np
    import torch
    import tilec
    import tilec.language as T

    def shifted_store(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.serial(n):
                    B[i + 1] = A[i]  # GLOBAL OUT OF BOUNDS
        return tilec.compile(main, target="cuda", pass_configs={"tilec.bounds_check": True})

    def shifted_shared_read():
        @T.prim_func
        def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                s = T.alloc_shared((128,), "float32")
                for i in T.Parallel(128):
                    s[i] = A[i]
                for i in T.Parallel(128):
                    B[i] = s[i + 1]  # SHARED OUT OF BOUNDS
        return tilec.compile(main, target="cuda", pass_configs={"tilec.bounds_check": True})

    def copy_to_rank():
        @T.prim_func
        def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
            with T.Kernel(2, threads=64, cluster_dims=2) as bx:
                s = T.alloc_shared((64,), "float32")
                T.copy(A[bx * 64:bx * 64 + 64], s)
                T.copy_cluster(s, s, dst_block=T.Cast("int32", A[0]) + 1)  # PEER OUT OF BOUNDS
                T.cluster_sync()
                T.copy(s, B[bx * 64:bx * 64 + 64])
        return tilec.compile(main, target="cuda", pass_configs={"tilec.bounds_check": True})
    """)


def run_on_gpu(tmp_path, body):
    pytest.importorskip("torch")
    script = tmp_path / "on_gpu.py"
    script.write_text(GPU_PRELUDE + textwrap.dedent(body))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return script, done


@pytest.mark.gpu
@pytest.mark.deliberate_fault
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("make,size,marker,description", [
    ("shifted_store(8)", 8, "# GLOBAL OUT OF BOUNDS",
     "index [8] is out of bounds for shape (8) of 'B'"),
    ("shifted_shared_read()", 128, "# SHARED OUT OF BOUNDS",
     "index [128] is out of bounds for shape (128) of 's'"),
    ("copy_to_rank()", 128, "# PEER OUT OF BOUNDS",
     "index [2] is out of bounds for shape (2) of the peer block rank"),
])
def test_gpu_access_out_of_bounds_fails_the_call_with_its_description(tmp_path, make, size, marker,
                                                                     description):
    script, done = run_on_gpu(tmp_path, f"""
        kernel = {make}
        a = torch.ones({size}, device="cuda")
        b = torch.zeros_like(a)
        try:
            kernel(a, b)
        except RuntimeError as e:
            print("FIRST:", e)
        else:
            raise SystemExit("no error")
        try:
            kernel(a, b)
        except RuntimeError as e:
            print("AFTER:", e)
        else:
            raise SystemExit("the context still works after a trap")
        """)
    first = next(line for line in done.stdout.splitlines() if line.startswith("FIRST:"))
    site = f"at {script}:{line_of(marker, script)}:"
    assert f"kernel 'main': {description} {site}" in first, first
    # the first block to fail reports (a cluster's two blocks both reach out of bounds)
    assert re.search(r"\(block \([01], 0, 0\), thread ", first), first
    assert "a bounds check failed on the GPU, and the kernel trapped" in first, first
    assert "restart it" in first, first
    # The device said it too, on the process's stdout.
    assert f"tilec: kernel 'main': {description} {site}" in done.stdout, done.stdout
    after = next(line for line in done.stdout.splitlines() if line.startswith("AFTER:"))
    assert (f"this process's CUDA context has been unusable since a bounds check failed: "
            f"kernel 'main': {description}") in after, after


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_checked_kernels_compute_what_unchecked_ones_do(tmp_path):
    run_on_gpu(tmp_path, """
        def matmul(M, N, K):
            @T.prim_func
            def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
                     C: T.Tensor((M, N), "float32")):
                with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
                    A_shared = T.alloc_shared((64, 32), "float16")
                    B_shared = T.alloc_shared((32, 64), "float16")
                    C_local = T.alloc_fragment((64, 64), "float32")
                    T.clear(C_local)
                    for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
                        T.copy(A[by * 64, k * 32], A_shared)
                        T.copy(B[k * 32, bx * 64], B_shared)
                        T.gemm(A_shared, B_shared, C_local)
                    T.copy(C_local, C[by * 64, bx * 64])
            return main

        # Whole tiles, and ragged ones whose copies are predicated.
        for M, N, K in [(256, 256, 128), (200, 136, 100)]:
            kernel = tilec.compile(matmul(M, N, K), target="cuda",
                                   pass_configs={"tilec.bounds_check": True})
            assert "cuda/bounds_check.h" in kernel.get_kernel_source()
            a = torch.randn(M, K, device="cuda", dtype=torch.float16)
            b = torch.randn(K, N, device="cuda", dtype=torch.float16)
            c = torch.full((M, N), float("nan"), device="cuda")
            kernel(a, b, c)
            torch.testing.assert_close(c, a.float() @ b.float(), rtol=2e-3, atol=2e-3)

        @T.prim_func
        def reverse_halves(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
            with T.Kernel(2, threads=128) as bx:
                s = T.alloc_shared((128,), "float32")
                for i in T.Parallel(128):
                    s[i] = A[bx * 128 + i]
                for i in T.Parallel(128):
                    B[bx * 128 + i] = s[127 - i]

        kernel = tilec.compile(reverse_halves, target="cuda",
                               pass_configs={"tilec.bounds_check": True})
        a = torch.randn(256, device="cuda")
        b = torch.full_like(a, float("nan"))
        kernel(a, b)
        torch.testing.assert_close(b, a.view(2, 128).flip(1).reshape(256))

        # Under graph capture the launch is not waited for; the graph runs it.
        b.fill_(float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            kernel(a, b)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(b, a.view(2, 128).flip(1).reshape(256))
        """)
