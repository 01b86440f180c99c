"""tilec.testing: the requires_* markers (pytest skips with a stated reason), set_random_seed,
main, and torch_assert_close under TileLang's names."""

import os
import pathlib
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec.testing
from tilec import _core
from tilec.utils.tensor import torch_assert_close


def skip_mark(func):
    """(skips, reason) of the one skipif mark a marker put on `func`."""
    (mark,) = [m for m in func.pytestmark if m.name == "skipif"]
    return bool(mark.args[0]), mark.kwargs["reason"]


def a_test():
    """A new test function (marks accumulate on a function)."""
    def test():
        pass

    return test


def test_requires_package():
    assert skip_mark(tilec.testing.requires_package("numpy")(a_test()))[0] is False
    skips, reason = skip_mark(tilec.testing.requires_package("numpy", "no_such_package_x")(a_test()))
    assert skips and reason == "Requires package no_such_package_x"


def test_requires_cuda_skips_without_a_gpu_and_says_why():
    skips, reason = skip_mark(tilec.testing.requires_cuda(a_test()))
    assert skips == (not _core.cuda_available())
    if skips:
        assert reason == f"Requires CUDA: {_core.cuda_unavailable_reason()}"


def test_requires_cuda_compute_version_without_a_gpu():
    if _core.cuda_available():
        pytest.skip("this machine has a GPU")
    skips, reason = skip_mark(tilec.testing.requires_cuda_compute_version(9, 0)(a_test()))
    assert skips and reason.startswith("Requires CUDA compute ge 9.0, but have no CUDA GPU")


@pytest.mark.parametrize("marker, version, skips", [
    ("requires_cuda_compute_version_eq", (9, 0), False),
    ("requires_cuda_compute_version_eq", (8, 0), True),
    ("requires_cuda_compute_version_ge", (8, 9), False),
    ("requires_cuda_compute_version_ge", (10,), True),
    ("requires_cuda_compute_version_gt", (9, 0), True),
    ("requires_cuda_compute_version_gt", (8, 6), False),
    ("requires_cuda_compute_version_le", (9, 0), False),
    ("requires_cuda_compute_version_le", (8, 9), True),
    ("requires_cuda_compute_version_lt", (9, 0), True),
    ("requires_cuda_compute_version_lt", (10, 0), False),
])
def test_requires_cuda_compute_version_compares(monkeypatch, marker, version, skips):
    monkeypatch.setattr(tilec.testing, "_compute_version", lambda: (9, 0))
    got, reason = skip_mark(getattr(tilec.testing, marker)(*version)(a_test()))
    assert got == skips
    minor = version[1] if len(version) > 1 else 0
    assert reason == f"Requires CUDA compute {marker[-2:]} {version[0]}.{minor}, but have 9.0"


def test_requires_cuda_compute_version_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="mode 'ne' is not one of ge, gt, le, lt, eq"):
        tilec.testing.requires_cuda_compute_version(9, 0, mode="ne")


def test_rocm_markers_skip_without_a_rocm_gpu(monkeypatch):
    monkeypatch.setattr(tilec.testing, "_rocm_gpu_arch", lambda: None)
    assert skip_mark(tilec.testing.requires_rocm(a_test()))[0]
    assert skip_mark(tilec.testing.requires_cdna(a_test())) == (True, "Requires a CDNA ROCm GPU")
    assert skip_mark(tilec.testing.requires_gfx950(a_test()))[0]
    monkeypatch.setattr(tilec.testing, "_rocm_gpu_arch", lambda: "gfx950:sramecc+")
    assert not skip_mark(tilec.testing.requires_gfx950(a_test()))[0]
    assert not skip_mark(tilec.testing.requires_cdna(a_test()))[0]
    assert not skip_mark(tilec.testing.requires_cuda_or_cdna(a_test()))[0]


def test_set_random_seed_repeats_python_and_numpy():
    tilec.testing.set_random_seed(3)
    first = (random.random(), np.random.rand(4))
    tilec.testing.set_random_seed(3)
    second = (random.random(), np.random.rand(4))
    assert first[0] == second[0] and np.array_equal(first[1], second[1])
    tilec.testing.set_random_seed()
    assert random.random() != first[0]


def test_torch_assert_close_is_the_tensor_utilities():
    assert tilec.testing.torch_assert_close is torch_assert_close


def test_main_runs_pytest_on_the_calling_file(tmp_path):
    test_file = tmp_path / "test_example.py"
    test_file.write_text(textwrap.dedent("""\
        import tilec.testing

        def test_passes():
            assert True

        @tilec.testing.requires_package("no_such_package_x")
        def test_needs_a_package():
            raise AssertionError("ran")

        if __name__ == "__main__":
            tilec.testing.main()
        """))
    # the package this test imports, wherever it is installed from
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(tilec.__file__).parent.parent)}
    done = subprocess.run([sys.executable, str(test_file), "-rs", "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "Requires package no_such_package_x" in done.stdout
    test_file.write_text(test_file.read_text().replace("assert True", "assert False"))
    done = subprocess.run([sys.executable, str(test_file), "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 1 and "1 failed" in done.stdout
