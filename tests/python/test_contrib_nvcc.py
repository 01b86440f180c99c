"""tilec.contrib.nvcc (TileLang's tilelang.contrib.nvcc): the compute version of a target or of
the current GPU (a stand-in of torch's device properties here)."""

from types import SimpleNamespace

import pytest

import tilec
from tilec.carver.arch import driver
from tilec.contrib import nvcc

from helpers import skip_without_nvrtc


def test_compute_version_of_an_arch_or_target():
    assert nvcc.get_target_compute_version("sm_90a") == "9.0"
    assert nvcc.get_target_compute_version("cuda -arch=sm_80") == "8.0"
    assert nvcc.get_target_compute_version("sm_86") == "8.6"
    assert nvcc.get_target_compute_version(SimpleNamespace(arch="sm_120a")) == "12.0"
    assert nvcc.parse_compute_version("9.0") == (9, 0)
    with pytest.raises(ValueError, match="names no CUDA arch"):
        nvcc.get_target_compute_version("cpu")
    with pytest.raises(ValueError, match="is not 'major.minor'"):
        nvcc.parse_compute_version("90")


def test_compute_version_of_a_compiled_kernel():
    import tilec.language as T

    @T.prim_func
    def fill(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                A[i] = 1.0

    with skip_without_nvrtc():
        kernel = tilec.compile(fill, target="cuda", arch="sm_90a")
    assert nvcc.get_target_compute_version(kernel) == "9.0"


def test_compute_version_of_the_current_gpu(monkeypatch):
    monkeypatch.setattr(driver, "get_cuda_device_properties",
                        lambda device_id=0: SimpleNamespace(major=9, minor=0))
    assert nvcc.get_target_compute_version() == "9.0"
    monkeypatch.setattr(driver, "get_cuda_device_properties", lambda device_id=0: None)
    with pytest.raises(RuntimeError, match="no CUDA-capable device"):
        nvcc.get_target_compute_version()


def test_tileLangs_import_form():
    from tilec.contrib import nvcc as imported

    assert imported is nvcc and tilec.contrib.nvcc is nvcc
