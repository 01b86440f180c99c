"""CUDA kernels from Python: compiled for an explicit arch with no GPU (NVRTC
only), their arguments checked, and, where there is a GPU, launched on torch
and CuPy tensors on the caller's stream, inside CUDA graphs too."""

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core

from helpers import skip_without_nvrtc

ARCH = "sm_90a"


def _scale_add(block):
    n = T.symbolic("n")

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
             Z: T.Tensor((n,), "float32"), alpha: T.float32):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]

    return main


# Z = alpha * X + Y, built for ARCH (no GPU needed), or for this machine's GPU
# with Z allocated when not given.
scale_add_for_arch = tilec.jit(_scale_add, target="cuda", arch=ARCH)
scale_add = tilec.jit(_scale_add, out_idx=[2], target="cuda")


def nvrtc_or_skip(compile_kernel):
    with skip_without_nvrtc():
        return compile_kernel()


# --- no GPU needed ---------------------------------------------------------------

def test_compiles_for_an_explicit_arch_without_a_gpu():
    kernel = nvrtc_or_skip(lambda: scale_add_for_arch(128))
    assert kernel.target == "cuda" and kernel.arch == ARCH
    assert "__global__" in kernel.get_kernel_source()
    assert f"target=cuda arch={ARCH}" in repr(kernel)


def test_tilec_compile_takes_an_arch():
    @T.prim_func
    def fill(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                A[i] = 1.0

    kernel = nvrtc_or_skip(lambda: tilec.compile(fill, target="cuda", arch="sm_80"))
    assert kernel.target == "cuda" and kernel.arch == "sm_80"


def test_cpu_arrays_are_refused_naming_the_parameter():
    kernel = nvrtc_or_skip(lambda: scale_add_for_arch(128))
    x = np.ones(100, np.float32)
    with pytest.raises(ValueError, match="argument 'X' is in CPU memory but kernel 'main' was "
                                         "compiled for CUDA"):
        kernel(x, x, x, 2.0)


def test_cpu_torch_tensors_are_refused_naming_the_parameter():
    torch = pytest.importorskip("torch")
    kernel = nvrtc_or_skip(lambda: scale_add_for_arch(128))
    x = torch.ones(100)
    with pytest.raises(ValueError, match="argument 'X' is in CPU memory"):
        kernel(x, x, x, 2.0)


@pytest.mark.skipif(_core.cuda_available(), reason="this machine has a GPU, whose arch is taken")
def test_without_a_gpu_the_arch_must_be_given():
    with pytest.raises(ValueError, match='pass one, e.g. arch "sm_90a"'):
        scale_add(128)


def test_arch_is_for_cuda():
    with pytest.raises(ValueError, match="arch 'sm_80' is for target 'cuda', not 'cpu'"):
        tilec.jit(_scale_add, target="cpu", arch="sm_80")(128)


@pytest.mark.parametrize("target,arch,message", [
    ("gpu", None, "unknown target 'gpu' (targets: cpu, cuda, hip)"),
    ("cuda", "sm_75", "unknown arch 'sm_75' for target 'cuda' (cuda arches: sm_80, sm_86, sm_89, sm_90, sm_90a)"),
    ("hip", "gfx1100", "unknown arch 'gfx1100' for target 'hip' (hip arches: gfx90a, gfx940, gfx906)"),
])
def test_a_bad_target_or_arch_names_the_valid_ones(target, arch, message):
    with pytest.raises(ValueError) as error:
        tilec.jit(_scale_add, target=target, arch=arch)(128)
    assert str(error.value).startswith(message)


# --- on a GPU --------------------------------------------------------------------

@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
class TestOnGpu:
    @pytest.mark.parametrize("n", [0, 1, 127, 128, 1000, 100_003])
    def test_launch_allocates_the_output_on_the_inputs_device(self, torch, n):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        z = scale_add(128)(x, y, 1.5)
        assert z.device == x.device and z.dtype == torch.float32 and z.shape == (n,)
        torch.testing.assert_close(z, 1.5 * x + y)

    def test_in_place_on_a_view_with_an_offset(self, torch):
        x, y = torch.randn(2, 1000, device="cuda"), torch.randn(1000, device="cuda")
        z = torch.full((1000,), float("nan"), device="cuda")
        assert scale_add(128)(x[1], y, z, -2.0) is None
        torch.testing.assert_close(z, -2.0 * x[1] + y)

    def test_runs_on_the_current_stream(self, torch):
        x = torch.zeros(4096, device="cuda")
        y = torch.ones(4096, device="cuda")
        kernel = scale_add(256)
        kernel(x, y, 1.0)  # loaded and warmed up
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            torch.cuda._sleep(50_000_000)  # holds the stream for tens of milliseconds
            x.fill_(3.0)
            z = kernel(x, y, 2.0)  # wrong (1.0) if it ran before the fill, on another stream
        stream.synchronize()
        torch.testing.assert_close(z, torch.full_like(x, 7.0))

    def test_cuda_graph_capture_and_replay(self, torch):
        x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
        z = torch.empty(1000, device="cuda")
        kernel = scale_add(128)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            kernel(x, y, z, 3.0)  # warm-up: loading a module can't happen during capture
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            kernel(x, y, z, 3.0)
        for _ in range(2):
            x.copy_(torch.randn(1000, device="cuda"))
            z.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            torch.testing.assert_close(z, 3.0 * x + y)

    def test_cupy_arrays(self):
        cupy = pytest.importorskip("cupy")
        x = cupy.random.standard_normal(1000, dtype=cupy.float32)
        y = cupy.random.standard_normal(1000, dtype=cupy.float32)
        z = cupy.full(1000, cupy.nan, dtype=cupy.float32)
        with cupy.cuda.Stream(non_blocking=True):
            scale_add(128)(x, y, z, 0.5)
            expected = 0.5 * x + y
            cupy.testing.assert_allclose(z, expected, rtol=1e-6)
