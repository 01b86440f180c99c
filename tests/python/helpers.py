"""The one reference helper of the Python tests.

Every correctness test follows the same recipe (DESIGN.md, "Tests and
measurement"):

  * inputs come from ``rand`` -- fresh random values on every run, never zero
    (floats lie in +-[0.1, 1], integers in a small range);
  * outputs passed in place are filled by ``poison`` first (NaN for floats, a
    sentinel for integers) so an element the kernel forgot to write shows up;
  * results are compared with ``assert_close`` against a NumPy reference
    computed in float64, with a relative tolerance set by the precision of the
    result; the failure message names the worst element.

Dtypes are named as in kernels ("float16", "bfloat16", "float8_e4m3", ...);
``np_dtype`` maps a name to the NumPy / ml_dtypes type the Python face accepts.

Kernels are compiled with ``jit`` for the target under test, TILEC_TEST_TARGET
("cpu", the default, or "cuda"); tests call them with NumPy arrays either way
(see "the target under test" below).
"""

import contextlib
import logging
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilec
from tilec import capture
from tilec.jit import JitFunction

# Kernel dtype name -> the array dtype that carries it across the Python face.
NP_DTYPES = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "float8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
}

FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2"]
INT_DTYPES = ["int8", "int32", "int64", "uint8"]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ["bool"]

# Relative tolerance of a result stored in each float type: about one rounding
# of that type (float8: one ulp), with room for float32 accumulation.
RTOL = {
    "float64": 1e-12,
    "float32": 1e-5,
    "float16": 1e-3,
    "bfloat16": 1e-2,
    "float8_e4m3": 0.125,
    "float8_e5m2": 0.25,
}

# A float32 matrix product on tensor cores (operands rounded to tf32).
TF32_RTOL = 2e-3

# Integer ranges drawn by rand: small enough that sums and products in tests
# don't overflow, and never containing the poison sentinel.
INT_RANGES = {
    "int8": (-100, 100),
    "int16": (-1000, 1000),
    "int32": (-1000, 1000),
    "int64": (-1000, 1000),
    "uint8": (1, 200),
    "uint16": (1, 60000),
    "uint32": (1, 4000000000),
}


def dtype_name(dtype):
    """The kernel name of a dtype given as a name or a NumPy/ml_dtypes dtype."""
    if isinstance(dtype, str):
        if dtype not in NP_DTYPES:
            raise KeyError(f"unknown dtype name {dtype!r}")
        return dtype
    d = np.dtype(dtype)
    for name, npd in NP_DTYPES.items():
        if npd == d:
            return name
    raise KeyError(f"no kernel dtype for {d}")


def np_dtype(dtype):
    return NP_DTYPES[dtype_name(dtype)]


def is_float(dtype):
    return dtype_name(dtype) in RTOL


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def rand(shape, dtype, rng, low=None, high=None):
    """Fresh random values of `dtype`, never zero for floats.

    Floats: uniform magnitudes in [0.1, 1] with a random sign (then rounded to
    the dtype), or uniform in [low, high] when both are given. Integers:
    uniform in [low, high] (default INT_RANGES). bool: random True/False.
    """
    name = dtype_name(dtype)
    shape = _shape(shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in INT_RANGES:
        lo, hi = INT_RANGES[name]
        lo = lo if low is None else low
        hi = hi if high is None else high
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dtype(name))
    if low is not None and high is not None:
        x = rng.uniform(low, high, size=shape)
    else:
        x = rng.uniform(0.1, 1.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return x.astype(np.float32).astype(np_dtype(name)) if name != "float64" else x


def poison(shape, dtype):
    """An output buffer whose every element shows if the kernel doesn't write it.

    NaN for floats, the smallest value for signed integers, the largest for
    unsigned ones (rand never draws either). bool has no spare value: True.
    """
    name = dtype_name(dtype)
    shape = _shape(shape)
    if name in RTOL:
        return np.full(shape, np.nan, dtype=np.float32).astype(np_dtype(name))
    if name == "bool":
        return np.ones(shape, dtype=np.bool_)
    info = np.iinfo(np_dtype(name))
    sentinel = info.max if info.min == 0 else info.min
    return np.full(shape, sentinel, dtype=np_dtype(name))


def _fmt_index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def assert_close(actual, expected, dtype, *, scale=None, rtol=None, floor=1.0, exact=False,
                 what=""):
    """Checks a kernel's result against a float64 (or exact) NumPy reference.

    Integers and bool must match exactly. For floats the error of an element is
    |actual - expected| / max(|expected|, scale, floor), compared with `rtol`
    (default RTOL[dtype]); `scale` (broadcastable) is the magnitude of the terms
    a sum was made of (e.g. |A| @ |B|), so that cancellation doesn't count
    against the kernel. NaN must match NaN, an infinity the same infinity.

    exact=True: the result must be bit for bit `expected` converted to `dtype`
    (pass the conversion NumPy/ml_dtypes made); only NaN payloads may differ.
    """
    name = dtype_name(dtype)
    label = f"{what}: " if what else ""
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected), (
        f"{label}shape {actual.shape} != expected {np.shape(expected)}")
    assert actual.dtype == np_dtype(name), (
        f"{label}dtype {actual.dtype} != expected {np_dtype(name)} ({name})")
    shape = actual.shape

    if not is_float(name):
        exp = np.asarray(expected).astype(np_dtype(name))
        bad = np.flatnonzero(actual.reshape(-1) != exp.reshape(-1))
        if bad.size:
            i = bad[0]
            raise AssertionError(
                f"{label}{bad.size} of {actual.size} {name} elements differ; first at "
                f"{_fmt_index(i, shape)}: actual {actual.reshape(-1)[i]!r}, "
                f"expected {exp.reshape(-1)[i]!r}")
        return

    a = actual.astype(np.float64).reshape(-1)
    if exact:
        exp_t = np.asarray(expected).astype(np_dtype(name))
        e = exp_t.astype(np.float64).reshape(-1)
        uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[actual.itemsize]
        same_bits = actual.reshape(-1).view(uint) == exp_t.reshape(-1).view(uint)
        ok = same_bits | (np.isnan(a) & np.isnan(e))
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = bad[0]
            raise AssertionError(
                f"{label}{bad.size} of {a.size} {name} elements differ from the exact "
                f"conversion; first at {_fmt_index(i, shape)}: actual {float(a[i])!r} "
                f"(bits {actual.reshape(-1).view(uint)[i]:#x}), expected {float(e[i])!r} "
                f"(bits {exp_t.reshape(-1).view(uint)[i]:#x})")
        return

    e = np.asarray(expected, dtype=np.float64).reshape(-1)
    tol = RTOL[name] if rtol is None else rtol
    if rtol is None and scale is not None and name == "float32" and TARGET == "cuda":
        # A float32 sum of products on the GPU may come from T.gemm on tensor cores, whose
        # float32 mode rounds operands to tf32 (10 mantissa bits), as TileLang and Triton do.
        tol = TF32_RTOL
    denom = np.maximum(np.abs(e), floor)
    if scale is not None:
        denom = np.maximum(denom, np.broadcast_to(np.abs(np.asarray(scale, np.float64)),
                                                  shape).reshape(-1))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - e) / denom
    nan_e, nan_a = np.isnan(e), np.isnan(a)
    inf_e = np.isinf(e)
    err = np.where(nan_e, np.where(nan_a, 0.0, np.inf), err)
    err = np.where(inf_e & ~nan_e, np.where(a == e, 0.0, np.inf), err)
    err = np.where(nan_a & ~nan_e, np.inf, err)
    bad = np.flatnonzero(err > tol)
    if bad.size:
        i = int(np.argmax(err))
        raise AssertionError(
            f"{label}{bad.size} of {a.size} {name} elements beyond rtol={tol:g}; worst at "
            f"{_fmt_index(i, shape)}: actual {float(a[i])!r}, expected {float(e[i])!r} "
            f"(error {err[i]:.3g} relative to {denom[i]:.3g})")


def run_kernel(kernel, *args):
    """Runs a kernel with outputs given in place; returns the arrays passed.

    An argument may be an array, or a (shape, dtype) tuple for an output, which
    is created by ``poison``.
    """
    arrays = [poison(*a) if isinstance(a, tuple) else a for a in args]
    result = kernel(*arrays)
    assert result is None, "a kernel given every tensor writes in place and returns None"
    return arrays


# --- the target under test -------------------------------------------------------
#
# On cuda, a kernel called with NumPy arrays runs on torch CUDA copies of them
# and the arrays get the results back; outputs it allocates come back as NumPy
# arrays. So a test reads the same on both targets.

TARGET = os.environ.get("TILEC_TEST_TARGET", "cpu")

# Every kernel `jit` compiled, as what the core compiled it from: {key: RecordedKernel}.
RECORDED_KERNELS = {}


class RecordedKernel:
    """What the core compiled a kernel from: the function value (source, file,
    first line, name and tagged bindings) and the pass configs."""

    def __init__(self, function_value, pass_configs):
        self.source, self.filename, self.first_line, self.name, self.bindings = function_value
        self.pass_configs = pass_configs

    def __repr__(self):
        constants = {name: value for name, (tag, value) in self.bindings.items()
                     if tag in ("int", "float", "bool", "str")}
        return f"{os.path.basename(self.filename)}:{self.first_line} {self.name} {constants}"


@contextlib.contextmanager
def compiled_kernels():
    """A list of the kernels tilec compiles inside the block (its DEBUG log's "compiled" lines)."""
    compiled = []

    class Compiles(logging.Handler):
        def emit(self, record):
            if ": compiled " in record.getMessage():
                compiled.append(record.getMessage())

    handler, logger = Compiles(logging.DEBUG), logging.getLogger("tilec")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield compiled
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@contextlib.contextmanager
def skip_without_nvrtc():
    """Skips the test where a CUDA compile inside the block can't load NVRTC."""
    try:
        yield
    except RuntimeError as e:
        if str(e).startswith("cannot compile CUDA kernels:"):
            pytest.skip(str(e))
        raise


def build_for_cuda(jitted, arch, **constants):
    """The CUDA source of `jitted` (a library kernel's jit function) for `arch`, with its out_idx
    and pass configs, built through NVRTC; skips where NVRTC can't be loaded."""
    retargeted = tilec.jit(jitted.__wrapped__, out_idx=jitted.out_idx, target="cuda", arch=arch,
                           pass_configs=jitted.pass_configs)
    with skip_without_nvrtc():
        return retargeted.compile(**constants).get_kernel_source()


def cpu_only(reason):
    """Skips a test (or, as a module's pytestmark, its tests) unless the target is cpu."""
    return pytest.mark.skipif(TARGET != "cpu", reason=f"the CPU backend only: {reason}")


def jit(func=None, *, out_idx=None, pass_configs=None):
    """tilec.jit for the target under test (decorator, with or without
    arguments, or a call); records every kernel it compiles in RECORDED_KERNELS."""

    def wrap(f):
        return _TestJitFunction(f, out_idx=out_idx, target=TARGET, pass_configs=pass_configs)

    return wrap if func is None else wrap(func)


class _TestJitFunction(JitFunction):
    """A JitFunction that records what it compiles; on cuda its kernels take NumPy arrays."""

    def _compile(self, capture_function):
        function_value = capture_function()
        kernel = super()._compile(lambda: function_value)
        RECORDED_KERNELS.setdefault(repr((function_value, sorted(self.pass_configs.items()))),
                                    RecordedKernel(function_value, dict(self.pass_configs)))
        return _NumpyOnGpuKernel(kernel._core, kernel.out_idx) if TARGET == "cuda" else kernel


class _NumpyOnGpuKernel(tilec.Kernel):
    """A CUDA kernel that takes NumPy arrays (see _GpuStaging)."""

    def run(self, args):
        staging = _GpuStaging()
        outputs = super().run([staging.to_gpu(arg) if isinstance(arg, np.ndarray) else arg
                               for arg in args])
        staging.copy_back()
        if isinstance(outputs, tuple):
            return tuple(staging.to_numpy(output) for output in outputs)
        return staging.to_numpy(outputs)


class _GpuStaging:
    """NumPy arrays' memory on the GPU. Each buffer an array views is copied
    whole, once: views of one buffer alias on the GPU as they do on the host,
    and reads or writes past an array's ends (which tests check) land where
    they would on the CPU."""

    def __init__(self):
        import torch

        self._torch = torch
        self._buffers = {}  # id(owner) -> (owner's bytes, their GPU copy)
        self._arrays = {}  # id(GPU view) -> (the view, the array it stands for)

    def to_gpu(self, array):
        name = _kernel_dtype_name(array.dtype)
        if name is None:
            return array  # a dtype no kernel takes: the call's error names it
        owner = array
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        if id(owner) not in self._buffers:
            host = _bytes_of(owner)
            gpu_bytes = self._torch.empty(host.size, dtype=self._torch.uint8, device="cuda")
            gpu_bytes.copy_(self._torch.from_numpy(host.copy()))
            self._buffers[id(owner)] = (host, gpu_bytes)
        gpu_bytes = self._buffers[id(owner)][1]
        itemsize = array.dtype.itemsize
        offset = array.ctypes.data - owner.ctypes.data
        assert offset % itemsize == 0 and all(s >= 0 and s % itemsize == 0 for s in array.strides), (
            "test arrays must be aligned views with non-negative strides")
        typed = gpu_bytes[:gpu_bytes.numel() // itemsize * itemsize].view(_torch_dtype(name))
        view = typed.as_strided(array.shape, [s // itemsize for s in array.strides],
                                offset // itemsize)
        self._arrays[id(view)] = (view, array)
        return view

    def copy_back(self):
        for host, gpu_bytes in self._buffers.values():
            if host.flags.writeable:
                host[...] = gpu_bytes.cpu().numpy()

    def to_numpy(self, tensor):
        """An output: the array a staged view stands for, or a new array."""
        if id(tensor) in self._arrays:
            return self._arrays[id(tensor)][1]
        host = tensor.detach().contiguous().reshape(-1).view(self._torch.uint8).cpu().numpy()
        return host.view(np_dtype(_kernel_dtype_name(tensor.dtype))).reshape(tuple(tensor.shape))


def _bytes_of(owner):
    if owner.flags.c_contiguous:
        return owner.reshape(-1).view(np.uint8)
    if owner.flags.f_contiguous:
        return owner.T.reshape(-1).view(np.uint8)
    raise ValueError("test arrays must view contiguous memory")


def _kernel_dtype_name(dtype):
    """The kernel dtype name of a NumPy or torch dtype, or None."""
    name = capture.library_dtype_name(dtype)
    name = {"float8_e4m3fn": "float8_e4m3"}.get(name, name)
    return name if name in NP_DTYPES else None


def _torch_dtype(name):
    import torch

    return getattr(torch, {"float8_e4m3": "float8_e4m3fn"}.get(name, name))


# --- diagnostics ---------------------------------------------------------------

DIAG_RE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<message>.*)$",
                     re.MULTILINE)


def line_of(marker, path):
    """The 1-based line of `path` that ends with `marker` (e.g. a comment
    `# ERR:name`); exactly one line may. Lines that merely mention the marker
    (the tests that look for it) don't count."""
    with open(path, encoding="utf-8") as f:
        hits = [i + 1 for i, text in enumerate(f) if text.rstrip().endswith(marker)]
    assert len(hits) == 1, f"marker {marker!r} found on lines {hits} of {path}"
    return hits[0]


def parse_diagnostic(text):
    """Splits a compile error's text into file, line, col, message, the quoted
    source line and the caret's column (1-based, relative to the quoted line)."""
    m = DIAG_RE.search(text)
    assert m, f"no 'file:line:col: error: ...' in the error text:\n{text}"
    rest = text[m.end():].split("\n")
    # rest[0] is what follows the message on its line (empty); then source, caret.
    assert len(rest) >= 3, f"no source line and caret after the message:\n{text}"
    source, caret = rest[1], rest[2]
    assert caret.strip() == "^", f"third line is not a caret line: {caret!r}\n{text}"
    prefix = len(caret) - len(caret.lstrip())
    # The quoted line and the caret line carry the same indentation prefix.
    quoted = source[4:] if source.startswith("    ") else source
    return {
        "file": m.group("file"),
        "line": int(m.group("line")),
        "col": int(m.group("col")),
        "message": m.group("message"),
        "source": quoted,
        "caret_col": prefix - (len(source) - len(quoted)) + 1,
        "text": text,
    }


def check_diagnostic(text, path, marker, *words):
    """Asserts that a compile error points at the line of `path` holding `marker`
    and that its message mentions every one of `words` (case-insensitive)."""
    d = parse_diagnostic(text)
    assert os.path.basename(d["file"]) == os.path.basename(path), text
    assert d["line"] == line_of(marker, path), (
        f"error reported on line {d['line']}, expected line {line_of(marker, path)}:\n{text}")
    assert d["source"].strip() and d["source"].strip() in open(path, encoding="utf-8").read(), (
        f"quoted line is not from the source:\n{text}")
    for w in words:
        assert w.lower() in d["message"].lower(), f"{w!r} not in the message:\n{text}"
    return d


# --- random source -------------------------------------------------------------

@pytest.fixture
def rng():
    """A fresh generator per test. The seed is printed (shown when the test
    fails); set TILEC_TEST_SEED to replay it."""
    seed = int(os.environ.get("TILEC_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")
    print(f"rng seed: {seed} (TILEC_TEST_SEED={seed} replays it)")
    return np.random.default_rng(seed)


def prim_func_from_text(text, folder, name="main"):
    """The @T.prim_func `name` of kernel source `text`, written to folder/kernel.py and imported
    (tilec reads a kernel's source from its file, so errors name kernel.py's lines)."""
    import importlib.util

    path = folder / "kernel.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
