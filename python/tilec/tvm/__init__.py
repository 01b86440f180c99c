"""The part of TVM that TileLang programs touch for types (`from tilelang import tvm`):
DataType, tirx (also as tir) for the expression helpers their kernels call, and testing's
requires_package.

TileLang ships its own TVM, which `import tvm` finds once tilelang is imported. Likewise, when
tilec is imported where neither a TVM nor TileLang (whose TVM that would be) is installed,
`tvm`, `tvm.tirx`, `tvm.tir` and `tvm.testing` name these modules, so a TileLang program's
`from tvm import DataType` or `from tvm import tirx` runs unchanged."""

import importlib.util
import sys

from .. import testing
from ..datatype import DataType
from . import tirx

tir = tirx


def _name_tvm_where_none_is_installed():
    if "tvm" in sys.modules or any(importlib.util.find_spec(name) is not None
                                   for name in ("tvm", "tilelang")):
        return
    sys.modules.update({"tvm": sys.modules[__name__], "tvm.tirx": tirx, "tvm.tir": tirx,
                        "tvm.testing": testing})


_name_tvm_where_none_is_installed()

__all__ = ["DataType", "testing", "tir", "tirx"]
