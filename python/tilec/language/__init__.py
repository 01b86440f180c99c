"""The T namespace, as far as Python sees it.

Python never executes a kernel body: the C++ core parses it and knows the
kernel-body primitives (T.Kernel, T.copy, T.gemm, ...). What lives here is
what Python itself evaluates: decorators, parameter annotations, dtypes,
symbolic dims, and the constants a jit factory computes.
"""

import builtins as _builtins  # this module's bool and int are dtypes
import functools as _functools
import numbers as _numbers
import sys as _sys
from dataclasses import dataclass as _dataclass

from .. import _core
from .. import capture as _capture

# The torch and numpy (ml_dtypes) names of the element types whose tilec name differs or
# that numpy lacks.
_TORCH_NAMES = {"float8_e4m3": "float8_e4m3fn"}
_ML_DTYPES_NAMES = {"bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn",
                    "float8_e5m2": "float8_e5m2"}


class dtype(str):
    """An element type: a str, so T.float16 == "float16". T.dtype(x) takes a
    name ("float16", "half", "float8_e4m3fn"), a torch or numpy dtype or a
    dtype, and holds tilec's canonical name for it."""

    __slots__ = ()

    def __new__(cls, value):
        name = value if isinstance(value, str) else _capture.library_dtype_name(value)
        if name is None:
            raise TypeError(f"T.dtype takes an element type name or a torch or numpy dtype, "
                            f"not a {type(value).__qualname__}")
        canonical = _core.dtype_name(name)
        if canonical is None:
            raise ValueError(f"tilec has no element type named {name!r}")
        return super().__new__(cls, canonical)

    def __repr__(self):
        return f"T.{str(self)}"

    def _tilec_value(self):
        return ("dtype", str(self))

    def as_torch(self):
        """The torch dtype (torch.float16 for T.float16)."""
        import torch

        name = _TORCH_NAMES.get(str(self), str(self))
        result = getattr(torch, name, None)
        if not isinstance(result, torch.dtype):
            raise TypeError(f"torch {torch.__version__} has no dtype {name} (for T.{self})")
        return result

    def as_numpy(self):
        """The numpy dtype; bfloat16 and the float8 types are ml_dtypes'."""
        import numpy

        if str(self) in _ML_DTYPES_NAMES:
            import ml_dtypes

            return numpy.dtype(getattr(ml_dtypes, _ML_DTYPES_NAMES[str(self)]))
        return numpy.dtype(str(self))


class SymbolicExpr:
    """Arithmetic on symbolic dims (n * 2, batch * heads, m // block): in a parameter annotation
    such as T.Tensor((n * 2,), ...), where the core reads the expression from the source text,
    or as a value that a kernel uses (width = pages * 64, then width in the kernel), where the
    core rebuilds it from the operator and its operands."""

    __slots__ = ("text", "op", "operands")

    def __init__(self, text, op=None, operands=()):
        self.text = text
        self.op = op
        self.operands = operands

    def __repr__(self):
        return self.text

    def _tilec_value(self):
        if self.op is None:  # an operand other than an int or a symbolic dim: text alone
            return ("opaque", f"symbolic expression {self.text}")
        left, right = self.operands
        return ("symbolic_arith", (self.op, _capture.to_core_value(left), _capture.to_core_value(right)))

    def _binary(self, op, other, reflected=False):
        left, right = (other, self) if reflected else (self, other)
        text = f"({left!r} {op} {right!r})"
        if isinstance(other, _builtins.bool) or not isinstance(other, (_numbers.Integral, SymbolicExpr)):
            return SymbolicExpr(text)
        if op in ("//", "%") and not reflected and not isinstance(other, SymbolicExpr) and other == 0:
            raise ZeroDivisionError(f"symbolic dims' arithmetic: {text}")
        return SymbolicExpr(text, op, (left, right))

    def __add__(self, other): return self._binary("+", other)
    def __radd__(self, other): return self._binary("+", other, reflected=True)
    def __sub__(self, other): return self._binary("-", other)
    def __rsub__(self, other): return self._binary("-", other, reflected=True)
    def __mul__(self, other): return self._binary("*", other)
    def __rmul__(self, other): return self._binary("*", other, reflected=True)
    def __floordiv__(self, other): return self._binary("//", other)
    def __rfloordiv__(self, other): return self._binary("//", other, reflected=True)
    def __mod__(self, other): return self._binary("%", other)
    def __rmod__(self, other): return self._binary("%", other, reflected=True)


class SymbolicDim(SymbolicExpr):
    """A dim known only when the kernel is called (T.symbolic / T.dynamic)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype="int32"):
        super().__init__(name)
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"T.symbolic({self.name!r})"

    def _tilec_value(self):
        return ("symbolic", (self.name, str(self.dtype)))


class GemmWarpPolicy:
    """How T.gemm splits its tile over the block's warps on a GPU (policy=...): the
    squarest per-warp tiles, whole rows per warp, or whole columns per warp."""

    Square = "Square"
    FullRow = "FullRow"
    FullCol = "FullCol"


def dynamic(name, dtype="int32"):
    """A symbolic dim, solved from the tensors' shapes at each call. "batch, seq_len" (or
    "batch seq_len") names several at once and gives a tuple of them."""
    if not isinstance(name, str):
        raise TypeError(f"T.dynamic takes the dim's name as a string, not {type(name).__name__}")
    parts = [part.strip() for part in name.split(",")] if "," in name else name.split()
    for part in parts:
        if not part.isidentifier():
            raise ValueError(f"T.dynamic({name!r}): {part!r} is not a name")
    if not parts:
        raise ValueError("T.dynamic needs the dim's name")
    if len(parts) == 1:
        return SymbolicDim(parts[0], dtype)
    return tuple(SymbolicDim(part, dtype) for part in parts)


symbolic = dynamic


def ceildiv(a, b):
    if isinstance(a, SymbolicExpr) or isinstance(b, SymbolicExpr):
        return SymbolicExpr(f"T.ceildiv({a!r}, {b!r})")
    return -(-a // b)


@_dataclass(frozen=True)
class TensorType:
    """What T.Tensor(...) / T.Tensor[...] evaluates to in an annotation."""

    shape: tuple
    dtype: str

    def __repr__(self):
        return f"T.Tensor({self.shape!r}, {self.dtype!r})"


class _TensorTypeMaker:
    """T.Tensor and T.Buffer: callable as T.Tensor((M, K), "float16") and
    subscriptable as T.Tensor[(M, K), "float16"]."""

    def __init__(self, name):
        self._name = name

    def __call__(self, shape, dtype="float32"):
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        return TensorType(shape, dtype)

    def __getitem__(self, shape_and_dtype):
        if not (isinstance(shape_and_dtype, tuple) and len(shape_and_dtype) == 2
                and _is_dtype(shape_and_dtype[1])):
            raise TypeError(f"T.{self._name}[...] takes a shape and a dtype: "
                            f"T.{self._name}[(M, K), \"float16\"]")
        return self(*shape_and_dtype)

    def __repr__(self):
        return f"T.{self._name}"


def _is_dtype(value):
    return isinstance(value, str) or _capture.library_dtype_name(value) is not None


Tensor = _TensorTypeMaker("Tensor")
Buffer = _TensorTypeMaker("Buffer")


class KernelFunction:
    """A function whose body the core compiles. Its source is captured when
    it is defined, with the values the defining scope's locals have then (for
    names only its annotations use, which are found nowhere else); closure
    and global values are read when it is compiled."""

    def __init__(self, func, defining_locals):
        self.func = func
        self.source = _capture.source_text(func)
        names = _capture.referenced_names(func, self.source)
        self.scope = {name: defining_locals[name] for name in names if name in defining_locals}
        _functools.update_wrapper(self, func)

    def __repr__(self):
        return f"<{type(self).__name__} {self.func.__qualname__}>"

    def _tilec_value(self):
        return _capture.kernel_function_value(self.func, self.source, self.scope)


class PrimFunc(KernelFunction):
    """A @T.prim_func: a kernel."""

    def __init__(self, func, defining_locals):
        super().__init__(func, defining_locals)
        _capture.record_prim_func(self)


class Macro(KernelFunction):
    """A @T.macro: a helper inlined into the kernels that call it."""


def prim_func(func):
    return PrimFunc(func, _sys._getframe(1).f_locals)


def macro(func):
    return Macro(func, _sys._getframe(1).f_locals)


class _AbsentDType(str):
    """An element type TileLang has and tilec does not (4-bit integers): a name Python code can
    hold (TileLang's quantize helpers list it in a typing.Literal); a kernel that uses it as a
    dtype is a compile error naming it."""

    __slots__ = ()

    def __repr__(self):
        return f"T.{str(self)}"


int4 = _AbsentDType("int4")
uint4 = _AbsentDType("uint4")


# Defined last: `float`, `int` and `bool` shadow the builtins in this module.
float16 = dtype("float16")
bfloat16 = dtype("bfloat16")
float32 = dtype("float32")
float64 = dtype("float64")
float8_e4m3 = dtype("float8_e4m3")
float8_e5m2 = dtype("float8_e5m2")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
bool = dtype("bool")  # noqa: A001
float8_e4m3fn = float8_e4m3
half = float16
float = float32  # noqa: A001
double = float64
# TVM's C-style names, which TileLang's programs also use.
short = int16
int = int32  # noqa: A001
long = int64
uint = uint32
