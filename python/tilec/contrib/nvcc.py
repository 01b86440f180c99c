"""The CUDA compute version of a target or of the current GPU (tilelang.contrib.nvcc)."""

import re

from ..carver.arch import driver


def get_target_compute_version(target=None):
    """The compute version "major.minor" ("9.0" for sm_90a) of `target`: an arch ("sm_90a"), a
    target string naming one ("cuda -arch=sm_80"), or an object with an `arch` attribute (a
    tilec Kernel); None reads the current CUDA device (device 0) through torch, and without one
    is a RuntimeError."""
    if target is not None:
        arch = target if isinstance(target, str) else getattr(target, "arch", None)
        match = re.search(r"sm_(\d+?)(\d)a?\b", arch) if isinstance(arch, str) else None
        if match is None:
            raise ValueError(f"get_target_compute_version: target {target!r} names no CUDA arch "
                             f"(sm_XY)")
        return f"{match.group(1)}.{match.group(2)}"
    properties = driver.get_cuda_device_properties(0)
    if properties is None:
        raise RuntimeError("get_target_compute_version: no target given, and no CUDA-capable "
                           "device (seen through torch) to read the compute version from")
    return f"{properties.major}.{properties.minor}"


def parse_compute_version(compute_version):
    """(major, minor) of a compute version "9.0"."""
    major, separator, minor = str(compute_version).partition(".")
    if not (separator and major.isdigit() and minor.isdigit()):
        raise ValueError(f"compute version {compute_version!r} is not 'major.minor'")
    return int(major), int(minor)


__all__ = ["get_target_compute_version", "parse_compute_version"]
