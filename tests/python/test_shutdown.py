"""What a script sees when the interpreter ends while it still holds tilec kernels."""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import ctypes, sys, types
    if {fake_torch}:
        sys.modules["torch"] = types.ModuleType("torch")
    import tilec
    import tilec.language as T

    @T.prim_func
    def copy(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                B[i] = A[i]

    kernel = tilec.compile(copy, target="cpu")
    # A reference nothing gives back: the kernel outlives the interpreter, as objects that
    # torch holds at its end do.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(kernel._core))
""")


def run(fake_torch, tmp_path):
    script = tmp_path / "held.py"
    script.write_text(SCRIPT.format(fake_torch=fake_torch))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_kernel_alive_at_the_end_is_reported_as_a_leak_without_torch(tmp_path):
    assert "nanobind: leaked" in run(False, tmp_path)


def test_with_torch_loaded_nothing_is_reported(tmp_path):
    stderr = run(True, tmp_path)
    assert "leaked" not in stderr, stderr
