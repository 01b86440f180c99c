"""tilec: a tile-level kernel language and compiler.

    import tilec as tilelang
    import tilec.language as T

The compiler is the C++ library libtilec; this package hands it kernel source
text and values, and runs what it builds on your tensors.
"""

import atexit
import logging
import sys

from . import _core, autotuner, language, layout, math, profiler, transform, tvm, utils
from ._core import CompileError
from .autotuner import autotune
from .datatype import DataType
from .jit import compile, jit
from .kernel import Kernel
from .math import cdiv, next_power_of_2
from .tile_layout import TileLayout, standard_layout
from .plot_layout import plot_layout
from .profiler import Profiler
from .torch_library import register_torch_op
from .transform import PassConfigKey
from .utils.tensor import TensorSupplyType

__version__ = _core.version()


@atexit.register
def _no_leak_report_under_torch():
    # torch keeps objects alive past the interpreter's end (CPython issue 98253), and nanobind
    # then reports every tilec kernel a script still held as a leak. Without torch the report
    # stays on, so the tests still catch real reference leaks.
    if "torch" in sys.modules:
        _core.set_leak_warnings(False)

__all__ = ["CompileError", "DataType", "Kernel", "PassConfigKey", "Profiler", "TensorSupplyType", "TileLayout",
           "autotune", "autotuner", "cdiv", "compile", "jit", "language", "layout", "math",
           "next_power_of_2", "plot_layout", "profiler", "register_torch_op", "set_log_level", "set_nvtx",
           "standard_layout",
           "transform", "tvm", "utils",
           "__version__"]


def set_nvtx(on=True):
    """NVTX ranges for Nsight Systems and other profilers: on, each kernel launch is a range
    named after its kernel and each compile stage one named as set_log_level("DEBUG") logs it.
    $TILEC_NVTX=1 turns them on too. Raises RuntimeError where NVTX's library (libnvtx3interop,
    in the CUDA 13 toolkit) can't be loaded, saying why."""
    _core.set_nvtx(bool(on))
    reason = _core.nvtx_unavailable_reason() if on else ""
    if reason:
        _core.set_nvtx(False)
        raise RuntimeError(f"tilec.set_nvtx: {reason}")


def set_log_level(level):
    """"WARNING" (default), "INFO" or "DEBUG" (each compile stage and its
    time, from the core and from Python); logging's int levels work too."""
    name = logging.getLevelName(level) if isinstance(level, int) else str(level).upper()
    _core.set_log_level(name)
    logger = logging.getLogger("tilec")
    logger.setLevel(name)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[tilec] %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
