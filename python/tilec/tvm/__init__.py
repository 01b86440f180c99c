"""The part of TVM that TileLang programs touch for types (`from tilelang import tvm`):
DataType, and tirx (also as tir) for the expression helpers their kernels call.

TileLang ships its own TVM, which `import tvm` finds once tilelang is imported. Likewise, where
no real TVM is installed, importing tilec.tvm makes `tvm`, `tvm.tirx` and `tvm.tir` name these
modules, so a program's `from tilelang import tvm as tvm` followed by `from tvm import DataType`
works unchanged. A program that imports tvm without importing tilelang's first needs its one
line changed: `from tvm import DataType` -> `from tilelang import DataType`."""

import importlib.util
import sys

from ..datatype import DataType
from . import tirx

tir = tirx

if "tvm" not in sys.modules and importlib.util.find_spec("tvm") is None:
    sys.modules["tvm"] = sys.modules[__name__]
    sys.modules["tvm.tirx"] = tirx
    sys.modules["tvm.tir"] = tirx

__all__ = ["DataType", "tir", "tirx"]
