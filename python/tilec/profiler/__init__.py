"""The profiler (TileLang's tilelang.profiler): do_bench, and Kernel.get_profiler()'s Profiler,
which checks a kernel against a reference and times it on tensors it makes for the kernel's
inputs (tilec.utils.tensor)."""

import functools

from ..utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close
from .bench import do_bench

__all__ = ["Profiler", "TensorSupplyType", "do_bench"]


class Profiler:
    """Checks and times `kernel` (a tilec Kernel) on inputs supplied as `supply_type` says:
    one tensor for each parameter but the outputs (out_idx), on the kernel's device (the GPU
    for a cuda or hip kernel)."""

    def __init__(self, kernel, supply_type=TensorSupplyType.Auto):
        self.kernel = kernel
        self.params = kernel.params
        self.result_idx = list(kernel.out_idx)
        self.supply_type = TensorSupplyType(supply_type)
        self.device = "cpu" if kernel.target == "cpu" else "cuda"
        self.supply = get_tensor_supply(self.supply_type, self.device)

    @property
    def func(self):
        """The kernel."""
        return self.kernel

    def __call__(self, *args):
        return self.kernel(*args)

    def _get_inputs(self, with_output=False, dynamic_symbolic_constraints=None):
        """New tensors for the kernel's inputs (and outputs too, with_output). A symbolic dim
        takes its value from dynamic_symbolic_constraints ({"n": 1024})."""
        constraints = dynamic_symbolic_constraints or {}
        inputs = []
        for index, param in enumerate(self.params):
            if with_output or index not in self.result_idx:
                inputs.append(self.supply(_with_dims(param, constraints)))
        return inputs

    def assert_allclose(self, reference_program, input_tensors=None, atol=1e-2, rtol=1e-2,
                        max_mismatched_ratio=0.01):
        """Runs `reference_program` and the kernel on the same inputs (supplied, or
        `input_tensors`) and compares their outputs pairwise with torch_assert_close (the
        same dtypes, at most max_mismatched_ratio of the elements beyond atol + rtol * |ref|).
        Either may return one tensor, a tuple or list of them, or None (nothing to compare);
        a None in the reference's outputs skips that output."""
        inputs = self._get_inputs() if input_tensors is None else list(input_tensors)
        expected = _as_list(reference_program(*inputs))
        self._synchronize()
        actual = _as_list(self.kernel(*inputs))
        self._synchronize()
        if len(actual) != len(expected):
            raise AssertionError(f"{self.kernel.name} returned {len(actual)} outputs and the "
                                 f"reference program {len(expected)}")
        for kernel_output, reference_output in zip(actual, expected):
            if kernel_output is not None and reference_output is not None:
                torch_assert_close(kernel_output, reference_output, rtol=rtol, atol=atol,
                                   max_mismatched_ratio=max_mismatched_ratio, base_name="tilec",
                                   ref_name="ref")

    def run_once(self, func=None):
        """`func` (default: the kernel) called once on supplied inputs; what it returns."""
        return (func or self.kernel)(*self._get_inputs())

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=0, n_repeat=0, input_tensors=None,
                 backend="event", quantiles=None, return_mode="mean",
                 dynamic_symbolic_constraints=None):
        """The time of `func` (default: the kernel) on supplied inputs (or `input_tensors`), in
        ms: tilec.profiler.do_bench's, on the kernel's device."""
        if input_tensors is None:
            input_tensors = self._get_inputs(dynamic_symbolic_constraints=dynamic_symbolic_constraints)
        call = functools.partial(func or self.kernel, *input_tensors)
        return do_bench(call, warmup=warmup, rep=rep, _n_warmup=n_warmup, _n_repeat=n_repeat,
                        quantiles=quantiles, backend=backend, return_mode=return_mode,
                        device=self.device if self.device == "cpu" else None)

    def _synchronize(self):
        if self.device != "cpu":
            import torch

            torch.cuda.synchronize()


class _ParamWithDims:
    """A kernel parameter with its symbolic dims given values."""

    def __init__(self, param, shape):
        self.name, self.is_tensor, self.dtype = param.name, param.is_tensor, param.dtype
        self.shape = shape


def _with_dims(param, constraints):
    if not param.is_tensor or all(isinstance(dim, int) for dim in param.shape):
        return param
    return _ParamWithDims(param, [constraints.get(dim, dim) if isinstance(dim, str) else dim
                                  for dim in param.shape])


def _as_list(outputs):
    if outputs is None:
        return []
    if isinstance(outputs, (tuple, list)):
        return list(outputs)
    return [outputs]
