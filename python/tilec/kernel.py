"""Kernel: a compiled kernel, called with tensors of any DLPack library."""

import functools
import numbers
import operator
import sys

from . import capture
from .language import dtype


def normalize_out_idx(out_idx, num_params, kernel_name):
    """out_idx (None, an int or a list of ints, negatives counting from the
    end like TileLang's out_idx=[-1]) as a list of param indices, or None."""
    if out_idx is None:
        return None
    indices = [out_idx] if isinstance(out_idx, numbers.Integral) else list(out_idx)
    normalized = []
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise ValueError(f"out_idx of {kernel_name}: {index!r} is not a param index")
        index = operator.index(index)
        if not -num_params <= index < num_params:
            raise ValueError(f"out_idx of {kernel_name}: {index} is out of range "
                             f"for {num_params} params")
        index %= num_params
        if index in normalized:
            raise ValueError(f"out_idx of {kernel_name}: param {index} is listed twice")
        normalized.append(index)
    return normalized


class Kernel:
    """A compiled kernel. Call it with every param to run in place (returns
    None), or with every param but the outputs (out_idx) to have the outputs
    allocated like the first tensor argument and returned."""

    def __init__(self, core_kernel, out_idx=None):
        self._core = core_kernel
        # T.alloc_global's scratch tensors are the core's last params: each call allocates them.
        core_params = list(core_kernel.params)
        self.params = [p for p in core_params if not p.workspace]
        self._workspaces = list(range(len(self.params), len(core_params)))
        given = normalize_out_idx(out_idx, len(self.params), core_kernel.name)
        for i in given or []:
            if not self.params[i].is_tensor:
                raise ValueError(f"out_idx of {core_kernel.name}: param {i} ('{self.params[i].name}') "
                                 f"is a scalar; only tensors are allocated as outputs")
        self.out_idx = given if given is not None else list(core_kernel.out_idx)
        # Outputs whose every dim is a constant are allocated without asking the core (the
        # launch checks the inputs either way): a call's Python cost is part of each launch.
        self._fixed_shapes = {i: tuple(core_params[i].shape) for i in self.out_idx + self._workspaces
                              if all(isinstance(d, int) for d in core_params[i].shape)}
        self._dtypes = [p.dtype for p in core_params]
        # What the autotuner measured, on the kernel it picked (TileLang's names); else None.
        self.latency = self.config = self.ref_latency = None

    @property
    def name(self):
        return self._core.name

    @property
    def target(self):
        return self._core.target

    @property
    def arch(self):
        """The GPU architecture a cuda kernel was built for ("sm_90a"); "" on the CPU."""
        return self._core.arch

    @property
    def const_dims(self):
        """(param index, dim, value) of the dims fixed at compile time."""
        return list(self._core.const_dims)

    @property
    def compile_seconds(self):
        return self._core.compile_seconds

    def get_kernel_source(self):
        """The generated source: CUDA C++ for target cuda, C++ for cpu."""
        return self._core.source

    get_source = get_kernel_source

    def get_ir(self):
        return self._core.ir

    def get_profiler(self, tensor_supply_type=None):
        """A tilec.profiler.Profiler of this kernel, its inputs supplied as
        tensor_supply_type (a tilec.TensorSupplyType; default Auto) says."""
        from .profiler import Profiler, TensorSupplyType

        return Profiler(self, TensorSupplyType.Auto if tensor_supply_type is None else tensor_supply_type)

    def get_tile_ir(self):
        return self._core.tile_ir

    def layouts(self):
        """The layout of each fragment and shared buffer (tilec.TileLayout, which
        tilec.plot_layout draws), as layout inference left them, in the order the kernel
        allocates them. GPU targets only (a kernel built for cuda with an arch needs no GPU);
        a CPU kernel has none."""
        from .tile_layout import TileLayout  # noqa: PLC0415

        return [TileLayout(layout) for layout in self._core.layouts]

    def output_shapes_of(self, shapes):
        """The shapes of the tensor params whose entry of `shapes` is None (the outputs), solved
        from the shapes (lists of ints) given for the others; a scalar's entry is None. No data
        is needed: what a torch fake kernel has while tracing."""
        wanted = sum(1 for p, s in zip(self.params, shapes) if s is None and p.is_tensor)
        # The workspaces come last among the core's params, so their shapes last.
        return self._core.output_shapes_of(list(shapes) + [None] * len(self._workspaces))[:wanted]

    def __call__(self, *args):
        if len(args) == len(self.params):
            outputs = ()
        elif self.out_idx and len(args) == len(self.params) - len(self.out_idx):
            outputs = self.out_idx
        else:
            raise ValueError(self._arity_message(len(args)))
        # One C++ call for tensors whose library has DLPack's C exchange API (torch 2.10+):
        # it reads them, allocates the outputs and launches on the current stream.
        result = self._core.call(args, outputs)
        if result is not NotImplemented:
            return result
        given = iter(args)
        result = self.run([None if i in outputs else next(given) for i in range(len(self.params))])
        return result if outputs else None

    def run(self, args):
        """Runs with one argument per param, None for each output (out_idx) to
        allocate; returns the outputs (one: it, several: a tuple). None for
        any other param is refused with the rest of the arguments."""
        args = list(args) + [None] * len(self._workspaces)
        missing = sorted([i for i in self.out_idx if args[i] is None] + self._workspaces)
        if missing:
            if all(i in self._fixed_shapes for i in missing):
                shapes = [self._fixed_shapes[i] for i in missing]
            else:
                shapes = self._core.output_shapes(
                    [None if i in missing else _core_arg(arg) for i, arg in enumerate(args)],
                    missing)
            like = next((arg for arg in args if capture.is_tensor(arg)), None)
            target = self.target
            for i, shape in zip(missing, shapes):
                args[i] = _allocate(shape, self._dtypes[i], like, target)
        # A GPU tensor's export is used once: each call of the core gets fresh ones.
        self._core.launch([_core_arg(arg) for arg in args], _current_stream(args))
        outputs = [args[i] for i in self.out_idx]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _arity_message(self, count):
        names = ", ".join(p.name for p in self.params)
        message = f"{self.name} takes {len(self.params)} arguments ({names})"
        if self.out_idx:
            inputs = ", ".join(p.name for i, p in enumerate(self.params) if i not in self.out_idx)
            message += (f", or {len(self.params) - len(self.out_idx)} without its outputs "
                        f"({inputs})")
        return f"{message}; got {count}"

    def __repr__(self):
        params = ", ".join(repr(p) for p in self.params)
        target = f"{self.target} arch={self.arch}" if self.arch else self.target
        return f"<tilec.Kernel {self.name} target={target} ({params}) out_idx={self.out_idx}>"


def _core_arg(arg):
    """A launch argument as tilec._core takes it."""
    convert = _CONVERTERS.get(type(arg))
    if convert is None:
        convert = _CONVERTERS[type(arg)] = _converter_for(type(arg))
    return convert(arg)


# type -> how an argument of that type goes to tilec._core (looked up once a type: a call's
# Python cost is part of every launch).
_CONVERTERS = {}


def _converter_for(arg_type):
    library = arg_type.__module__.partition(".")[0]
    if library == "torch":
        return _torch_converter()
    if library == "cupy":
        # Exported for the stream it runs on (_current_stream): no synchronization.
        return lambda arg: arg.__dlpack__(stream=-1)
    return _plain_arg


def _plain_arg(arg):
    if isinstance(arg, bool) or capture.is_numpy_bool(arg):
        return bool(arg)
    if isinstance(arg, numbers.Integral):
        return int(arg)
    if isinstance(arg, numbers.Real):
        return float(arg)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(arg, numpy.ndarray) and arg.dtype.type.__module__ == "ml_dtypes":
        # No DLPack for ml_dtypes arrays: a same-width unsigned view plus the true type.
        return (arg.view(f"uint{arg.dtype.itemsize * 8}"), arg.dtype.name)
    return arg


def _torch_converter():
    """A torch tensor as a DLPack capsule (a float8 one as uint8 plus its
    dtype name). to_dlpack exports without __dlpack__'s stream
    synchronization: the kernel runs on the current stream (_current_stream)
    and needs none, its event can't be recorded during CUDA graph capture, and
    it costs several times the export."""
    torch = sys.modules["torch"]
    to_dlpack = torch.utils.dlpack.to_dlpack
    float8 = tuple(getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2")
                   if hasattr(torch, name))  # torch 2.1 has them

    def convert(tensor):
        if tensor.dtype in float8:
            return (to_dlpack(tensor.view(torch.uint8)), capture.tensor_dtype_name(tensor))
        return to_dlpack(tensor)

    return convert


def _allocate(shape, dtype_name, like, target):
    """An uninitialized output in the library (and on the device) of `like`;
    without a tensor argument, numpy on the CPU, torch on a GPU."""
    if like is None:
        library = "numpy" if target == "cpu" else "torch"
    else:
        library = type(like).__module__.split(".")[0]
    if library == "torch":
        import torch

        device = like.device if like is not None else "cuda"
        return torch.empty(shape, dtype=_library_dtype("torch", dtype_name), device=device)
    if library == "numpy":
        import numpy

        return numpy.empty(shape, dtype=_library_dtype("numpy", dtype_name))
    raise TypeError(f"tilec allocates outputs as numpy arrays or torch tensors, not like a "
                    f"{type(like).__qualname__}: pass the outputs too")


@functools.cache
def _library_dtype(library, dtype_name):
    """torch's or numpy's type for a tilec element type name, looked up once a name (each
    allocating call needs it)."""
    return dtype(dtype_name).as_torch() if library == "torch" else dtype(dtype_name).as_numpy()


def _current_stream(args):
    """The current stream on the first GPU tensor's device of its library
    (PyTorch or CuPy), as an int; 0 (the default stream) without one."""
    for arg in args:
        library = type(arg).__module__.partition(".")[0]
        if library == "torch":
            if arg.is_cuda:
                # What torch.cuda.current_stream(device).cuda_stream gives, at a
                # tenth of its cost (the way Triton reads it).
                return sys.modules["torch"]._C._cuda_getCurrentRawStream(arg.device.index)
            return 0
        if library == "cupy":
            return sys.modules["cupy"].cuda.get_current_stream(arg.device.id).ptr
    return 0
