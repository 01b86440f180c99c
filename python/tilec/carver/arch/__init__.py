"""Descriptions of the machine's devices (tilelang.carver.arch): CUDA, CDNA and CPU objects
with TileLang's fields, read from the real device (through torch), and the driver queries."""

import importlib.util
import os

from . import driver


class CUDA:
    """A CUDA GPU (device 0 by default): sm_version (90 for compute capability 9.0),
    compute_capability ("90"), name, compute_max_core (its multiprocessors), warp_size,
    smem_cap (the shared memory of a block without opting in), max_smem_usage (twice that, as
    TileLang's), l2_cache_size_bytes, reg_cap (registers of a block). RuntimeError without a
    GPU."""

    platform = "CUDA"

    def __init__(self, target="cuda", device_id=0):
        properties = driver.get_cuda_device_properties(device_id)
        if properties is None:
            raise RuntimeError(f"Cannot find cuda device {device_id} (the CUDA description is "
                               f"read through torch, which sees no GPU or is not installed)")
        self.target = target
        self.device_id = device_id
        self.name = properties.name
        self.sm_version = properties.major * 10 + properties.minor
        self.compute_capability = f"{properties.major}{properties.minor}"
        self.compute_max_core = properties.multi_processor_count
        self.warp_size = getattr(properties, "warp_size", 32)
        self.smem_cap = int(properties.shared_memory_per_block)
        self.max_smem_usage = 2 * self.smem_cap
        self.l2_cache_size_bytes = int(properties.L2_cache_size)
        self.reg_cap = 65536

    def __repr__(self):
        return f"CUDA({self.target!r}: {self.name}, sm_{self.sm_version})"


class CDNA:
    """An AMD CDNA GPU seen by a ROCm build of torch: compute_capability (its gcnArchName, as
    "gfx942"), name, compute_max_core (compute units), warp_size (64), smem_cap (LDS of a
    block), max_smem_usage, l2_cache_size_bytes, reg_cap. RuntimeError without one."""

    platform = "CDNA"

    def __init__(self, target="hip", device_id=0):
        properties = driver.get_cuda_device_properties(device_id)
        if properties is None or not getattr(properties, "gcnArchName", ""):
            raise RuntimeError(f"Cannot find HIP device {device_id} (the CDNA description is "
                               f"read through a ROCm build of torch)")
        self.target = target
        self.device_id = device_id
        self.name = properties.name
        self.compute_capability = properties.gcnArchName.split(":")[0]
        self.compute_max_core = properties.multi_processor_count
        self.warp_size = getattr(properties, "warp_size", 64)
        self.smem_cap = int(properties.shared_memory_per_block)
        self.max_smem_usage = 2 * self.smem_cap
        self.l2_cache_size_bytes = int(getattr(properties, "L2_cache_size", 0))
        self.reg_cap = 32768

    def __repr__(self):
        return f"CDNA({self.target!r}: {self.name}, {self.compute_capability})"


class CPU:
    """The host: compute_max_core (the cores this process may use)."""

    platform = "CPU"

    def __init__(self, target="cpu"):
        self.target = target
        self.compute_max_core = len(os.sched_getaffinity(0))

    def __repr__(self):
        return f"CPU({self.compute_max_core} cores)"


def get_arch(target="cuda"):
    """The description of `target`'s device: "cuda", "hip", or "cpu" (TileLang's "llvm")."""
    kind = str(target).split()[0]
    if kind == "cuda":
        return CUDA(target)
    if kind in ("hip", "rocm"):
        return CDNA(target)
    if kind in ("cpu", "llvm", "c"):
        return CPU(target)
    raise ValueError(f"get_arch: no device description for target {target!r} (cuda, hip, cpu)")


def auto_infer_current_arch():
    """The current device's description: CDNA under a ROCm torch, CUDA where torch sees a
    GPU, else the CPU."""
    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            return CDNA("hip") if torch.version.hip is not None else CUDA("cuda")
    return CPU("cpu")


def is_cuda_arch(arch):
    return isinstance(arch, CUDA)


def is_cdna_arch(arch):
    return isinstance(arch, CDNA)


def is_cpu_arch(arch):
    return isinstance(arch, CPU)


__all__ = ["CDNA", "CPU", "CUDA", "auto_infer_current_arch", "driver", "get_arch",
           "is_cdna_arch", "is_cpu_arch", "is_cuda_arch"]
