"""tilec.carver.arch (TileLang's tilelang.carver.arch): the CUDA / CDNA / CPU descriptions and
the driver queries, from a stand-in of torch's device properties, without a GPU; and on a GPU
against torch's own."""

import os
from types import SimpleNamespace

import pytest

from tilec import _core
from tilec.carver import arch
from tilec.carver.arch import driver

H200 = SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                       shared_memory_per_block=49152, shared_memory_per_multiprocessor=233472,
                       L2_cache_size=52428800, warp_size=32)
MI300 = SimpleNamespace(name="AMD Instinct MI300X", major=9, minor=4, multi_processor_count=304,
                        shared_memory_per_block=65536, L2_cache_size=4194304, warp_size=64,
                        gcnArchName="gfx942:sramecc+:xnack-")


@pytest.fixture
def device(monkeypatch):
    def use(properties):
        monkeypatch.setattr(driver, "get_cuda_device_properties",
                            lambda device_id=0: properties)

    return use


def test_cuda_reads_the_device(device):
    device(H200)
    cuda = arch.CUDA("cuda")
    assert (cuda.sm_version, cuda.compute_capability, cuda.name) == (90, "90", "NVIDIA H200")
    assert (cuda.compute_max_core, cuda.warp_size, cuda.smem_cap) == (132, 32, 49152)
    assert cuda.max_smem_usage == 2 * 49152 and cuda.l2_cache_size_bytes == 52428800
    assert cuda.platform == "CUDA" and arch.is_cuda_arch(cuda) and not arch.is_cdna_arch(cuda)


def test_the_driver_queries(device):
    device(H200)
    assert driver.get_num_sms() == 132
    assert driver.get_device_name() == "NVIDIA H200"
    assert driver.get_shared_memory_per_block(format="kb") == 48
    assert driver.get_max_dynamic_shared_size_bytes() == 233472
    assert driver.get_l2_cache_size(format="mb") == 50
    with pytest.raises(ValueError, match="format 'gb' is not one of bytes, kb, mb"):
        driver.get_shared_memory_per_block(format="gb")


def test_cdna_reads_the_device(device):
    device(MI300)
    cdna = arch.CDNA("hip")
    assert (cdna.compute_capability, cdna.compute_max_core, cdna.warp_size) == ("gfx942", 304, 64)
    assert cdna.smem_cap == 65536 and cdna.platform == "CDNA" and arch.is_cdna_arch(cdna)
    device(H200)
    with pytest.raises(RuntimeError, match="Cannot find HIP device 0"):
        arch.CDNA("hip")


def test_without_a_gpu_queries_are_errors_and_the_arch_is_the_cpu(device, monkeypatch):
    device(None)
    with pytest.raises(RuntimeError, match="Cannot find cuda device 0"):
        arch.CUDA("cuda")
    with pytest.raises(RuntimeError, match="no properties of CUDA device 0"):
        driver.get_num_sms()
    assert driver.get_device_name() is None
    assert arch.get_arch("cpu").compute_max_core == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match="no device description for target 'metal'"):
        arch.get_arch("metal")


def test_auto_infer_current_arch_on_this_machine():
    found = arch.auto_infer_current_arch()
    try:
        import torch
    except ImportError:
        assert arch.is_cpu_arch(found)
        return
    expected = arch.CPU if not torch.cuda.is_available() else (
        arch.CDNA if torch.version.hip is not None else arch.CUDA)
    assert isinstance(found, expected)


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
def test_cuda_matches_torch_on_a_gpu():
    torch = pytest.importorskip("torch")
    properties = torch.cuda.get_device_properties(0)
    cuda = arch.CUDA("cuda")
    assert cuda.compute_max_core == properties.multi_processor_count == driver.get_num_sms()
    assert cuda.sm_version == properties.major * 10 + properties.minor
