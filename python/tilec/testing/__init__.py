"""Test helpers TileLang programs use (tilelang.testing): main, torch_assert_close,
set_random_seed, the requires_* markers, which skip a pytest test with a stated reason
where the machine lacks what it needs, and the performance regression scripts' process_func
and regression (perf_regression.py). pytest is imported only when a marker or main is used.
"""

import functools
import importlib.util
import inspect
import operator
import random
import sys

import numpy

from .. import _core
from ..utils.tensor import torch_assert_close
from .perf_regression import process_func, regression

__all__ = ["main", "requires_cdna", "requires_cuda", "requires_cuda_compute_version",
           "requires_cuda_compute_version_eq", "requires_cuda_compute_version_ge",
           "requires_cuda_compute_version_gt", "requires_cuda_compute_version_le",
           "requires_cuda_compute_version_lt", "requires_cuda_or_cdna", "requires_gfx950",
           "process_func", "regression", "requires_package", "requires_rocm", "set_random_seed",
           "torch_assert_close"]


def main():
    """Runs pytest on the calling file (with the command line's arguments) and exits with its
    status: `if __name__ == "__main__": tilec.testing.main()`."""
    import pytest

    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


def set_random_seed(seed=42):
    """Seeds Python's, NumPy's and (where installed) torch's generators, on every GPU too."""
    random.seed(seed)
    numpy.random.seed(seed)
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)


def _skip_unless(condition, reason):
    """A decorator marking a test (function or class) to skip with `reason` unless
    `condition`."""
    import pytest

    return pytest.mark.skipif(not condition, reason=reason)


def _cuda_reason():
    """Why a CUDA GPU can't run tests here, or None."""
    if not _core.cuda_available():
        return f"Requires CUDA: {_core.cuda_unavailable_reason()}"
    return None


@functools.cache
def _rocm_gpu_arch():
    """The gcnArchName of a ROCm GPU torch sees ("gfx942:sramecc+:xnack-"), or None."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    if torch.version.hip is None or not torch.cuda.is_available():
        return None
    return getattr(torch.cuda.get_device_properties(0), "gcnArchName", "") or None


def requires_cuda(func):
    """Skips the test where no CUDA GPU can be used."""
    reason = _cuda_reason()
    return _skip_unless(reason is None, reason or "")(func)


def requires_rocm(func):
    """Skips the test where torch sees no ROCm GPU."""
    return _skip_unless(_rocm_gpu_arch() is not None, "Requires ROCm (a ROCm build of torch "
                                                      "that sees a GPU)")(func)


def requires_cdna(func):
    """Skips the test unless the ROCm GPU is a CDNA one (gfx9: MI100 and later)."""
    arch = _rocm_gpu_arch() or ""
    return _skip_unless(arch.startswith("gfx9"), "Requires a CDNA ROCm GPU")(func)


def requires_gfx950(func):
    """Skips the test unless the ROCm GPU is a gfx950 (MI350)."""
    arch = _rocm_gpu_arch() or ""
    return _skip_unless(arch.startswith("gfx950"), "Requires gfx950 (CDNA4/MI350)")(func)


def requires_cuda_or_cdna(func):
    """Skips the test unless there is a CUDA GPU or a CDNA ROCm GPU."""
    usable = _cuda_reason() is None or (_rocm_gpu_arch() or "").startswith("gfx9")
    return _skip_unless(usable, "Requires CUDA or a CDNA ROCm GPU")(func)


def requires_package(*names):
    """Skips the test unless every Python package named is installed."""
    missing = [name for name in names if importlib.util.find_spec(name) is None]

    def mark(func):
        return _skip_unless(not missing, f"Requires package {', '.join(missing)}")(func)

    return mark


@functools.cache
def _compute_version():
    """The (major, minor) compute capability of CUDA device 0 as torch reads it, or None (no
    GPU, or no torch)."""
    if _cuda_reason() is not None or importlib.util.find_spec("torch") is None:
        return None
    import torch

    return tuple(torch.cuda.get_device_capability(0)) if torch.cuda.is_available() else None


_COMPARISONS = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt,
                "eq": operator.eq}


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    """Skips the test unless there is a CUDA GPU whose compute capability compares with
    (major_version, minor_version) as `mode` says: "ge" (the default), "gt", "le", "lt" or
    "eq"."""
    if mode not in _COMPARISONS:
        raise ValueError(f"requires_cuda_compute_version: mode {mode!r} is not one of "
                         f"{', '.join(_COMPARISONS)}")
    have = _compute_version()
    holds = have is not None and _COMPARISONS[mode](have, (major_version, minor_version))
    have_text = "no CUDA GPU that torch sees" if have is None else "%d.%d" % have
    reason = (f"Requires CUDA compute {mode} {major_version}.{minor_version}, but have "
              f"{have_text}")

    def mark(func):
        return _skip_unless(holds, reason)(func)

    return mark


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, mode="ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, mode="gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, mode="eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, mode="lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, mode="le")
