"""The kernels every target's compile checks go over without running them (test_cuda_nvrtc.py,
test_hip.py): the jit functions of examples/*.py with the constants each compiles with, and
the golden kernels of tests/golden/kernels/*.py with those of their headers."""

import ast
import functools
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN_KERNELS = ROOT / "tests" / "golden" / "kernels"

# The constants each jit function of examples/*.py is compiled with.
EXAMPLE_CONSTANTS = {
    ("demo.py", "gemm"): dict(M=256, N=256, K=128),
    ("demo.py", "axpy"): dict(N=1000),
    ("demo.py", "row_sum"): dict(cols=64),
    ("demo.py", "cache_setup_probe"): {},
    ("seed_matmul.py", "matmul_kernel"): dict(M=64, N=64, K=64),
    ("seed_dsa_index.py", "dsa_index_kernel"): dict(h=4, d=16),
    ("flash_attention.py", "flash_attention"): dict(batch=1, heads=2, seq_len=200, dim=64, causal=True),
}


@functools.cache
def import_file(path):
    """The module of a Python file, imported with its directory on sys.path."""
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"tilec_corpus_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def example_kernel(file_name, name):
    """The jit function `name` of examples/`file_name`, and the constants it compiles with."""
    return getattr(import_file(EXAMPLES / file_name), name), EXAMPLE_CONSTANTS[(file_name, name)]


def golden_kernel(path):
    """The jit function a golden kernel file names (`# func:`, in `# source:` or the file
    itself) and its `# defines:` as constants."""
    text = path.read_text(encoding="utf-8")
    source = _header(text, "source")
    module = import_file(ROOT / source if source else path)
    defines = dict(item.split("=", 1) for item in _header(text, "defines").split())
    return getattr(module, _header(text, "func")), {name: _value(v) for name, v in defines.items()}


def _header(text, key):
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(f"# {key}: "):
            return line[len(key) + 4:]
    return ""


def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
