"""What the core gets from Python: a function's source text and the values of
the free names it uses, converted to the core's tagged form.

A tagged value is a (tag, payload) pair that tilec._core turns into a
tilec::Value (see src/python/module.cc for the list of tags).
"""

import ast
import contextlib
import contextvars
import functools
import inspect
import numbers
import sys
import types
from dataclasses import dataclass

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class SourceText:
    source: str  # as written in the file, decorators included, indentation kept
    filename: str
    first_line: int  # line of source's first line in filename
    name: str


def source_text(func):
    """The source of `func` as the core wants it."""
    try:
        lines, first_line = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise ValueError(
            f"tilec needs the source text of '{func.__qualname__}', which Python can't find "
            f"({e}); define it in a file") from None
    return SourceText("".join(lines), func.__code__.co_filename, max(first_line, 1), func.__name__)


def referenced_names(func, text):
    """Names func's source reads from outside: every name in its text
    (decorators, annotations and defaults included, which Python evaluates in
    the enclosing scope) but func's own parameters and locals."""
    source = text.source
    # Nested functions' source is indented: parse it as the body of an `if`.
    tree = ast.parse("if 1:\n" + source if source[:1].isspace() else source)
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names - set(func.__code__.co_varnames) - set(func.__code__.co_cellvars)


def free_name_values(func, text=None, scope=None):
    """The values of func's free names, found in its closure cells, then in
    `scope` (locals of the scope that defined it), then in its
    globals. Builtins (range, min, len, ...) are left out: they are the kernel
    language's own. Names found nowhere (locals of nested functions) too."""
    closure = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not assigned yet
            pass
    scope = scope or {}
    values = {}
    for name in sorted(referenced_names(func, text or source_text(func))):
        if name in closure:
            values[name] = closure[name]
        elif name in scope:
            values[name] = scope[name]
        elif name in func.__globals__:
            values[name] = func.__globals__[name]
    return values


def function_value(func, text=None, scope=None, parameters=None):
    """The payload of a ("function", ...) tagged value: func's source (`text`
    when captured already) and the tagged values of its free names (see
    free_name_values), with the tagged `parameters` (an eager kernel's
    arguments) added."""
    text = text or source_text(func)
    values = free_name_values(func, text, scope)
    bindings = {name: to_core_value(value) for name, value in values.items()}
    bindings.update(parameters or {})
    return (text.source, text.filename, text.first_line, text.name, bindings)


_converting = contextvars.ContextVar("tilec_converting_functions", default=())


def to_core_value(value):
    """`value` as a tagged value for the core. Modules, classes, builtin functions and other
    libraries' objects are ("host", value): the core reads their attributes and calls them in
    Python while it compiles. Anything else the core can't use is ("opaque", type name), an
    error only if a kernel uses it."""
    convert = getattr(type(value), "_tilec_value", None)
    if convert is not None:  # tilec.language objects: dtypes, symbolic dims, prim_funcs
        return convert(value)
    if value is None:
        return ("none", None)
    if isinstance(value, bool) or is_numpy_bool(value):
        return ("bool", bool(value))
    if isinstance(value, numbers.Integral):
        value = int(value)
        if INT64_MIN <= value <= INT64_MAX:
            return ("int", value)
        return ("opaque", "int (beyond 64 bits)")
    if isinstance(value, numbers.Real):
        return ("float", float(value))
    if isinstance(value, str):
        return ("str", str(value))
    if isinstance(value, tuple):
        return ("tuple", [to_core_value(v) for v in value])
    if isinstance(value, list):
        return ("list", [to_core_value(v) for v in value])
    if value is _datatype_class():  # called in kernels: DataType(dtype).bits
        return ("module", "tilec.DataType")
    if isinstance(value, types.ModuleType):
        if value.__name__ in ("tilec", "tilec.language", "tilec.layout", "tilec.math",
                              "tilec.tvm", "tilec.tvm.tirx"):
            return ("module", value.__name__)
        return ("host", value)
    dtype = library_dtype_name(value)
    if dtype is not None:
        return ("dtype", dtype)
    if isinstance(value, types.FunctionType) and value.__name__ != "<lambda>":
        return _helper_function_value(value)
    if _runs_in_python(value):
        return ("host", value)
    return ("opaque", type(value).__qualname__)


def host_result(value):
    """What an attribute read or a call the core made in Python (a host object's) gives back,
    tagged: to_core_value's, but a Python function stays a host object, called in Python."""
    if isinstance(value, types.FunctionType) and getattr(type(value), "_tilec_value", None) is None:
        return ("host", value)
    return to_core_value(value)


def _runs_in_python(value):
    """Whether the core uses `value` as a host object (attributes read and calls made in Python
    while a kernel compiles): classes, builtin functions and methods, and instances of classes
    of other libraries than Python's builtins and tilec (but its device descriptions)."""
    if isinstance(value, (type, types.BuiltinFunctionType, types.MethodType, functools.partial)):
        return True
    module = type(value).__module__ or ""
    if module == "tilec" or module.startswith("tilec."):
        return module.startswith("tilec.carver")
    return module != "builtins"


def _datatype_class():
    from .datatype import DataType  # datatype imports the language, which imports this module

    return DataType


def _helper_function_value(func):
    try:
        return kernel_function_value(func)
    except ValueError:  # no source text
        return ("opaque", f"function {func.__name__} (no source)")


def kernel_function_value(func, text=None, scope=None):
    """("function", payload) for a function a kernel names (a helper, a
    @T.macro, a @T.prim_func, itself); inside its own conversion it is
    ("opaque", "function f (recursive)"): the kernel language has no recursion."""
    stack = _converting.get()
    if func in stack:
        return ("opaque", f"function {func.__name__} (recursive)")
    token = _converting.set(stack + (func,))
    try:
        return ("function", function_value(func, text, scope))
    finally:
        _converting.reset(token)


def is_numpy_bool(value):
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")


def library_dtype_name(value):
    """The element type name of a numpy/ml_dtypes/torch dtype object (or numpy
    scalar type such as numpy.float32), else None. Names are the library's
    ("float8_e4m3fn"); the core knows those aliases."""
    kind = type(value)
    if kind.__module__ == "torch" and kind.__name__ == "dtype":
        return str(value).removeprefix("torch.")
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if isinstance(value, numpy.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, numpy.generic):
        return numpy.dtype(value).name
    return None


def tensor_dtype_name(tensor):
    return library_dtype_name(tensor.dtype) or str(tensor.dtype)


def is_tensor(value):
    """Tensors cross to the core by DLPack; numpy arrays of ml_dtypes types
    (which have no DLPack) are tensors too."""
    if isinstance(value, type):
        return False
    if hasattr(value, "__dlpack__"):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def tensor_spec(tensor):
    """("tensor_spec", ...) for an eager kernel's tensor argument."""
    return ("tensor_spec", ([int(d) for d in tensor.shape], tensor_dtype_name(tensor)))


# The @T.prim_func functions a jit factory defines while it runs.
_defined_prim_funcs = contextvars.ContextVar("tilec_defined_prim_funcs", default=None)


@contextlib.contextmanager
def recording_prim_funcs():
    """Collects, into the list it yields, each prim_func defined inside."""
    defined = []
    token = _defined_prim_funcs.set(defined)
    try:
        yield defined
    finally:
        _defined_prim_funcs.reset(token)


def record_prim_func(prim_func):
    defined = _defined_prim_funcs.get()
    if defined is not None:
        defined.append(prim_func)
