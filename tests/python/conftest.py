"""Shared pytest setup: the markers, the check of the target under test
(TILEC_TEST_TARGET, see helpers.py), and a fresh kernel cache per session."""

import ctypes
import functools
import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a usable CUDA device (skipped elsewhere)")
    config.addinivalue_line("markers", "deliberate_fault: the kernel traps on purpose (left out "
                                       "of compute-sanitizer runs, which report the trap)")
    config.addinivalue_line("markers", "runs_last: runs after every other test (it uses what "
                                       "they recorded)")
    target = os.environ.get("TILEC_TEST_TARGET", "cpu")
    if target not in ("cpu", "cuda"):
        raise pytest.UsageError(f"TILEC_TEST_TARGET={target!r}: expected cpu or cuda")
    if target == "cuda":
        if cuda_unusable_reason():
            raise pytest.UsageError(f"TILEC_TEST_TARGET=cuda needs a CUDA GPU: "
                                    f"{cuda_unusable_reason()}")
        try:
            import torch  # noqa: F401  (the tests' arrays go to the GPU through torch)
        except ImportError:
            raise pytest.UsageError("TILEC_TEST_TARGET=cuda needs torch") from None


@functools.cache
def cuda_unusable_reason():
    """Why no CUDA device can be used here, or None. Asks the driver directly,
    so it needs neither torch nor a CUDA toolkit."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1 not found)"
    if driver.cuInit(0) != 0:
        return "the CUDA driver failed to initialize"
    count = ctypes.c_int(0)
    if driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device"
    return None


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if gpu_items and cuda_unusable_reason():
        skip = pytest.mark.skip(reason=cuda_unusable_reason())
        for item in gpu_items:
            item.add_marker(skip)
    items.sort(key=lambda item: item.get_closest_marker("runs_last") is not None)


@pytest.fixture(scope="session", autouse=True)
def tilec_cache_dir(tmp_path_factory):
    """A fresh TILEC_CACHE_DIR for the session, so tests never see (or leave)
    compiled kernels in the user's cache."""
    path = tmp_path_factory.mktemp("tilec-cache")
    previous = os.environ.get("TILEC_CACHE_DIR")
    os.environ["TILEC_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        del os.environ["TILEC_CACHE_DIR"]
    else:
        os.environ["TILEC_CACHE_DIR"] = previous
