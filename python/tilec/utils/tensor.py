"""Tensors for kernels' parameters, and comparing results (TileLang's tilelang.utils.tensor).

Tensors are torch tensors where torch is installed, on the GPU for a GPU kernel; without
torch they are numpy arrays, which serve CPU kernels only. Comparisons take either.
"""

import enum

import numpy

from .. import capture
from ..language import dtype as _dtype


class TensorSupplyType(enum.Enum):
    """How a supplied tensor is filled. Integer: small integers (-2..2; unsigned 0..2; float8
    from -128..127); Uniform: uniform in [-1, 1); Normal: normal with mean -1 and standard
    deviation 1; Randn: standard normal; Zero; One; Auto: uniform in [-1, 1) for float16,
    bfloat16 and float32, Integer's values for the rest. Uniform and Normal give int8 ones."""

    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def get_tensor_supply(supply_type=TensorSupplyType.Integer, device=None):
    """A function of a kernel parameter (Kernel.params[i]) that returns a new tensor of its
    shape and dtype, filled as `supply_type` says. `device`: "cpu" or "cuda"; None takes
    "cuda" where torch sees a GPU, else "cpu". A symbolic dim is an error naming it."""
    supply_type = TensorSupplyType(supply_type)
    if device is None:
        device = "cuda" if _torch_gpu() else "cpu"

    def supply(param):
        if not param.is_tensor:
            raise ValueError(f"parameter '{param.name}' is a scalar ({param.dtype}); tensors "
                             f"are supplied for tensor parameters only: pass the arguments "
                             f"(input_tensors=)")
        for dim in param.shape:
            if not isinstance(dim, int):
                raise ValueError(f"parameter '{param.name}' has the symbolic dim '{dim}', so "
                                 f"its shape is known only from a call: pass the tensors "
                                 f"(input_tensors=), or the dim's value "
                                 f"(dynamic_symbolic_constraints={{'{dim}': ...}})")
        return _filled(tuple(param.shape), _dtype(param.dtype), supply_type, device)

    return supply


def _torch_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _filled(shape, element, supply_type, device):
    if _has_torch():
        return _filled_torch(shape, element, supply_type, device)
    if device != "cpu":
        raise RuntimeError(f"tensors on the {device} device are made with torch, which is "
                           f"not installed")
    return _filled_numpy(shape, element, supply_type)


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _integer_range(element):
    """The [low, high) of the small integers Integer draws for `element`."""
    if element == "bool":
        return 0, 2
    if element.startswith("uint"):
        return 0, 3
    if element.startswith("float8"):
        return -128, 128
    return -2, 3


def _fill_kind(element, supply_type):
    """What fills a tensor of `element`: "integer", "uniform", "normal", "randn", "zero" or
    "one"."""
    if supply_type is TensorSupplyType.Auto:
        return "uniform" if element in ("float16", "bfloat16", "float32") else "integer"
    if element == "int8" and supply_type in (TensorSupplyType.Uniform, TensorSupplyType.Normal):
        return "one"
    return supply_type.name.lower()


def _filled_torch(shape, element, supply_type, device):
    import torch

    kind = _fill_kind(element, supply_type)
    target = element.as_torch()
    if kind == "integer":
        low, high = _integer_range(element)
        drawn = torch.int8 if element.startswith("float8") else torch.int64
        return torch.randint(low, high, shape, dtype=drawn, device=device).to(target)
    if kind == "zero":
        return torch.zeros(shape, dtype=target, device=device)
    if kind == "one":
        return torch.ones(shape, dtype=target, device=device)
    values = torch.empty(shape, dtype=torch.float32, device=device)
    if kind == "uniform":
        values.uniform_(-1.0, 1.0)
    elif kind == "normal":
        values.normal_(-1.0, 1.0)
    else:
        values.normal_(0.0, 1.0)
    return values.to(target)


def _filled_numpy(shape, element, supply_type):
    # numpy's global generator, so that tilec.testing.set_random_seed repeats the values.
    kind = _fill_kind(element, supply_type)
    target = element.as_numpy()
    if kind == "integer":
        low, high = _integer_range(element)
        return numpy.random.randint(low, high, size=shape).astype(target)
    if kind == "zero":
        return numpy.zeros(shape, dtype=target)
    if kind == "one":
        return numpy.ones(shape, dtype=target)
    if kind == "uniform":
        values = numpy.random.uniform(-1.0, 1.0, size=shape)
    elif kind == "normal":
        values = numpy.random.normal(-1.0, 1.0, size=shape)
    else:
        values = numpy.random.standard_normal(size=shape)
    return values.astype(numpy.float32).astype(target)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001,
                       verbose=False, equal_nan=True, check_device=True, check_dtype=True,
                       check_layout=True, check_stride=False, base_name="LHS", ref_name="RHS"):
    """Asserts that `tensor_a` and `tensor_b` (torch tensors or numpy arrays) have the same
    shape (and device, dtype, layout and strides as the check_* say), and that at most
    max_mismatched_ratio of their elements differ by more than atol + rtol * |b|. The
    comparison is in float64 (int64 for integers and bools). Returns True, else raises an
    AssertionError with the first mismatch and the largest differences."""
    a, b = _Operand(tensor_a), _Operand(tensor_b)
    _check_attributes(a, b, check_device, check_dtype, check_layout, check_stride)
    exact = a.is_integral and b.is_integral
    lhs, rhs = a.widened(exact, together_with=b), b.widened(exact, together_with=a)
    if isinstance(lhs, numpy.ndarray):
        close = numpy.isclose(lhs, rhs, rtol=rtol, atol=atol, equal_nan=equal_nan)
        diff = numpy.abs(lhs - rhs)
        relative = diff / (numpy.abs(rhs) + 1e-12)
    else:
        import torch

        close = torch.isclose(lhs, rhs, rtol=rtol, atol=atol, equal_nan=equal_nan)
        diff = torch.abs(lhs - rhs)
        relative = diff / (torch.abs(rhs) + 1e-12)
    mismatched = ~close
    count = int(mismatched.sum())
    total = int(numpy.prod(a.shape, dtype=numpy.int64))
    allowed = int(total * max_mismatched_ratio)
    if verbose:
        print(f"Number of mismatched elements: {count} / {total} (allowed: {allowed})")
    if count <= allowed:
        return True
    flat = int(mismatched.reshape(-1).nonzero()[0][0])
    index = [int(i) for i in numpy.unravel_index(flat, a.shape)]
    a_value, b_value = float(lhs.reshape(-1)[flat]), float(rhs.reshape(-1)[flat])
    raise AssertionError(
        f"Too many mismatched elements: {count} > {allowed} ({max_mismatched_ratio * 100:.2f}% "
        f"allowed, but get {count / total * 100:.2f}%).\n"
        f"First mismatch at index {index}: lhs={a_value:.6f}, rhs={b_value:.6f}, "
        f"abs_diff={abs(a_value - b_value):.6f}, "
        f"rel_diff={abs(a_value - b_value) / (abs(b_value) + 1e-12):.6f}\n"
        f"Greatest absolute difference: {float(_nanmax(diff))}, "
        f"Greatest relative difference: {float(_nanmax(relative))}\n"
        f"{base_name}: {tensor_a}\n{ref_name}: {tensor_b}")


def _nanmax(values):
    if isinstance(values, numpy.ndarray):
        return numpy.nanmax(values) if values.size else 0.0
    import torch

    finite = values[~torch.isnan(values)]
    return finite.max() if finite.numel() else 0.0


class _Operand:
    """One side of a comparison: a torch tensor or a numpy array (anything else is made one
    with numpy.asarray)."""

    def __init__(self, value):
        self.is_torch = type(value).__module__.partition(".")[0] == "torch"
        self.value = value if self.is_torch else numpy.asarray(value)
        self.shape = tuple(self.value.shape)
        self.dtype = capture.tensor_dtype_name(self.value)
        self.device = str(self.value.device) if self.is_torch else "cpu"
        self.is_integral = self.dtype == "bool" or "int" in self.dtype

    @property
    def layout(self):
        return str(self.value.layout).removeprefix("torch.") if self.is_torch else "strided"

    @property
    def strides(self):
        if self.is_torch:
            return tuple(self.value.stride())
        return tuple(s // self.value.itemsize for s in self.value.strides)

    def widened(self, exact, together_with):
        """The values as float64 (int64 when `exact`), with torch's kept on their device
        unless the other side is numpy or on another device: then both are numpy."""
        if self.is_torch and together_with.is_torch and self.device == together_with.device:
            import torch

            value = self.value.to_dense() if self.layout != "strided" else self.value
            return value.detach().to(torch.int64 if exact else torch.float64)
        value = self.value
        if self.is_torch:
            import torch

            value = value.to_dense() if self.layout != "strided" else value
            value = value.detach().to(torch.int64 if exact else torch.float64).cpu().numpy()
        return value.astype(numpy.int64 if exact else numpy.float64)


def _check_attributes(a, b, check_device, check_dtype, check_layout, check_stride):
    def differ(attribute, left, right):
        raise AssertionError(f"The values for attribute '{attribute}' do not match: "
                             f"{left} != {right}.")

    if a.shape != b.shape:
        differ("shape", a.shape, b.shape)
    if check_layout and a.layout != b.layout:
        differ("layout", a.layout, b.layout)
    if check_stride and a.strides != b.strides:
        differ("stride()", a.strides, b.strides)
    if check_device and a.device != b.device:
        differ("device", a.device, b.device)
    if check_dtype and a.dtype != b.dtype:
        differ("dtype", a.dtype, b.dtype)

