"""Which tile configuration a library kernel takes, from the tensor it is called on."""

import functools
from typing import NamedTuple

import tilec
from tilec.jit import resolve_target


class GpuFacts(NamedTuple):
    hopper: bool  # NVIDIA sm_90: TMA, wgmma
    amd: bool  # ROCm: 64 KiB of LDS a block, MFMA
    multiprocessors: int


def on_gpu(tensor):
    """Whether `tensor` lives on a GPU (a torch CUDA or ROCm tensor); NumPy arrays and CPU
    tensors run on the CPU backend."""
    return getattr(tensor, "is_cuda", False)


def is_hopper(tensor):
    """Whether `tensor` lives on an NVIDIA Hopper GPU (sm_90: TMA, wgmma). ROCm's torch calls
    its GPUs CUDA devices too and reports gfx90a (MI200) as capability (9, 0), so a ROCm
    build never counts."""
    return on_gpu(tensor) and gpu_facts(tensor.device.index).hopper


def is_amd(tensor):
    """Whether `tensor` lives on an AMD GPU (ROCm's torch)."""
    return on_gpu(tensor) and gpu_facts(tensor.device.index).amd


def multiprocessors(tensor):
    """The SM (NVIDIA) or CU (AMD) count of the GPU `tensor` lives on."""
    return gpu_facts(tensor.device.index).multiprocessors


@functools.cache
def gpu_facts(index):
    """GpuFacts of torch's GPU `index`, asked once a device: each library call reads them, and
    torch's query costs microseconds that would be part of every launch."""
    import torch  # noqa: PLC0415 (a GPU tensor is a torch tensor)

    properties = torch.cuda.get_device_properties(index)
    amd = torch.version.hip is not None
    return GpuFacts(hopper=not amd and (properties.major, properties.minor) == (9, 0), amd=amd,
                    multiprocessors=properties.multi_processor_count)


def for_device_of(tensor, factory):
    """`factory` (a library kernel's jit function) compiling for where `tensor` lives: a NumPy
    array or CPU tensor runs on the CPU backend, on a machine with a GPU too."""
    if on_gpu(tensor) or resolve_target(factory.target) == "cpu":
        return factory
    return _for_cpu(factory)


@functools.cache
def _for_cpu(factory):
    return tilec.jit(factory.__wrapped__, out_idx=factory.out_idx, target="cpu", pass_configs=factory.pass_configs,
                     compile_flags=factory.compile_flags)


def config_for(tensor, *, gpu, cpu, amd=None):
    """The tile configuration a library kernel takes for `tensor`: `cpu` on the CPU backend,
    `amd` on an AMD GPU (64 KiB of LDS a block; `gpu` when None), `gpu` on the others."""
    if not on_gpu(tensor):
        return cpu
    return amd if amd is not None and is_amd(tensor) else gpu
