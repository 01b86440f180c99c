"""Kernel: a compiled kernel, called with tensors of any DLPack library."""

import numbers
import operator
import sys

from . import capture

# numpy can't hold these natively; ml_dtypes provides them.
_ML_DTYPES = {"bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
_TORCH_DTYPES = {"float8_e4m3": "float8_e4m3fn"}


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
        self.params = list(core_kernel.params)
        given = normalize_out_idx(out_idx, len(self.params), core_kernel.name)
        self.out_idx = given if given is not None else list(core_kernel.out_idx)

    @property
    def name(self):
        return self._core.name

    @property
    def target(self):
        return self._core.target

    @property
    def const_dims(self):
        """(param index, dim, value) of the dims fixed at compile time."""
        return list(self._core.const_dims)

    @property
    def compile_seconds(self):
        return self._core.compile_seconds

    def get_kernel_source(self):
        return self._core.source

    get_source = get_kernel_source

    def get_ir(self):
        return self._core.ir

    def get_tile_ir(self):
        return self._core.tile_ir

    def __call__(self, *args):
        if len(args) == len(self.params):
            self.run(args)
            return None
        if self.out_idx and len(args) == len(self.params) - len(self.out_idx):
            given = iter(args)
            return self.run([None if i in self.out_idx else next(given)
                             for i in range(len(self.params))])
        raise ValueError(self._arity_message(len(args)))

    def run(self, args):
        """Runs with one argument per param, None for each output to allocate;
        returns the outputs (one: it, several: a tuple)."""
        args = list(args)
        core_args = [None if arg is None else _core_arg(arg) for arg in args]
        missing = [i for i, arg in enumerate(args) if arg is None]
        if missing:
            like = next((arg for arg in args if capture.is_tensor(arg)), None)
            for i, shape in zip(missing, self._core.output_shapes(core_args)):
                args[i] = _allocate(shape, self.params[i].dtype, like, self.target)
                core_args[i] = _core_arg(args[i])
        self._core.launch(core_args, _current_stream(args))
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
        return f"<tilec.Kernel {self.name} target={self.target} ({params}) out_idx={self.out_idx}>"


def _core_arg(arg):
    """A launch argument as tilec._core takes it."""
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
    if type(arg).__module__.startswith("torch") and str(arg.dtype).startswith("torch.float8"):
        return (arg.view(sys.modules["torch"].uint8), capture.tensor_dtype_name(arg))
    return arg


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
        dtype = getattr(torch, _TORCH_DTYPES.get(dtype_name, dtype_name))
        return torch.empty(shape, dtype=dtype, device=device)
    if library == "numpy":
        import numpy

        if dtype_name in _ML_DTYPES:
            import ml_dtypes

            return numpy.empty(shape, dtype=getattr(ml_dtypes, _ML_DTYPES[dtype_name]))
        return numpy.empty(shape, dtype=dtype_name)
    raise TypeError(f"tilec allocates outputs as numpy arrays or torch tensors, not like a "
                    f"{type(like).__qualname__}: pass the outputs too")


def _current_stream(args):
    """PyTorch's current stream for the first CUDA tensor (0: the default)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        for arg in args:
            if isinstance(arg, torch.Tensor) and arg.is_cuda:
                return torch.cuda.current_stream(arg.device).cuda_stream
    return 0
