"""Checking and timing one compiled config: its inputs, the comparison with
ref_prog, and its time per run.

Inputs are, in this order: those of set_autotune_inputs, supply_prog's, or
drawn from the kernel's input params by supply_type (numpy arrays on the CPU,
torch tensors on a GPU).
"""

import sys
import statistics
import time

import numpy

from ..kernel import _allocate


class Stopped(Exception):
    """The config ran past its timeout; its measurement was abandoned."""


class Measurement:
    """The state one tuning run shares across its configs: cached inputs and
    the reference's latency. `stop` (a threading.Event) abandons a running
    measurement at its next kernel run."""

    def __init__(self, profile_args, captured_inputs):
        self.args = profile_args
        self.captured_inputs = captured_inputs
        self.ref_latency = None
        self._cached_inputs = None  # (signature, inputs) with cache_input_tensors

    def latency(self, kernel, warmup, rep, stop, early_stop_above=None):
        """The kernel's time per run in ms, after its check against ref_prog.
        Past `early_stop_above` ms in the first runs it stops there."""
        args = self.args
        inputs = self.inputs_for(kernel)
        if args.ref_prog is not None and not args.skip_check:
            self._check(kernel, inputs)
        latency = time_per_run(lambda: kernel(*inputs), kernel.target, warmup, rep, stop,
                               early_stop_above)
        if args.ref_prog is not None and self.ref_latency is None:
            self.ref_latency = time_per_run(lambda: args.ref_prog(*inputs), kernel.target, warmup,
                                            rep, stop)
        return latency

    def inputs_for(self, kernel):
        if self.captured_inputs is not None:
            return self.captured_inputs
        params = [p for i, p in enumerate(kernel.params) if i not in kernel.out_idx]
        if self.args.supply_prog is not None:
            return list(self.args.supply_prog(params))
        signature = [(p.name, p.dtype, tuple(p.shape)) for p in params]
        if self._cached_inputs is not None and self._cached_inputs[0] == signature:
            return self._cached_inputs[1]
        inputs = [_draw(p, self.args.supply_type, kernel.target, kernel.name) for p in params]
        if self.args.cache_input_tensors:
            self._cached_inputs = (signature, inputs)
        return inputs

    def _check(self, kernel, inputs):
        args = self.args
        expected = _as_list(args.ref_prog(*inputs))
        returned = kernel(*inputs)
        # Called with every param (set_autotune_inputs may give the outputs too), the kernel
        # returns nothing: its outputs are the out_idx arguments.
        actual = ([inputs[i] for i in kernel.out_idx] if returned is None and
                  len(inputs) == len(kernel.params) else _as_list(returned))
        if args.manual_check_prog is not None:
            args.manual_check_prog(actual, expected)
            return
        if len(actual) != len(expected):
            raise AssertionError(f"the kernel gave {len(actual)} outputs and ref_prog "
                                 f"{len(expected)}")
        for index, (got, want) in enumerate(zip(actual, expected)):
            if got is not None and want is not None:
                assert_close(got, want, args.rtol, args.atol, args.max_mismatched_ratio,
                             f"output {index}")


def time_per_run(run, target, warmup, rep, stop, early_stop_above=None, batches=5):
    """Ms per call of `run` over `rep` calls after `warmup` calls: the calls are timed in up
    to `batches` batches and the median batch's time per call is taken, so one batch slowed
    by something else on the machine (a preempted thread, another process's kernels) does
    not decide. Past `early_stop_above` ms in the first batch it stops there."""
    synchronize = _synchronize(target)
    for _ in range(max(int(warmup), 0)):
        _check_stop(stop)
        run()
    synchronize()
    rep = max(int(rep), 1)
    batches = max(min(int(batches), rep), 1)
    per_call = []
    for index in range(batches):
        size = rep // batches + (index < rep % batches)
        _check_stop(stop)
        start = time.perf_counter()
        for _ in range(size):
            run()
        synchronize()
        per_call.append((time.perf_counter() - start) / size * 1e3)
        if early_stop_above is not None and per_call[0] > early_stop_above:
            return per_call[0]
    return float(statistics.median(per_call))


def assert_close(actual, expected, rtol, atol, max_mismatched_ratio, name):
    """Raises AssertionError when more than max_mismatched_ratio of the
    elements differ by more than atol + rtol * |expected| (NaN differs from
    everything but NaN)."""
    got, want = _float64(actual), _float64(expected)
    if got.shape != want.shape:
        raise AssertionError(f"{name}: shape {got.shape}, expected {want.shape}")
    differs = ~numpy.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    count = int(differs.sum())
    if count > max_mismatched_ratio * got.size:
        worst = numpy.unravel_index(numpy.argmax(numpy.where(differs, numpy.abs(got - want), -1)),
                                    got.shape)
        raise AssertionError(
            f"{name}: {count} of {got.size} elements differ beyond rtol={rtol}, atol={atol} "
            f"(at most {max_mismatched_ratio:.2%} may); e.g. at {tuple(int(i) for i in worst)}: "
            f"{got[worst]!r}, expected {want[worst]!r}")


def _check_stop(stop):
    if stop is not None and stop.is_set():
        raise Stopped()


def _synchronize(target):
    if target == "cpu":
        return lambda: None
    torch = sys.modules.get("torch")
    return torch.cuda.synchronize if torch is not None else (lambda: None)


def _as_list(outputs):
    if outputs is None:
        return []
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _float64(array):
    if type(array).__module__.startswith("torch"):
        array = array.detach().float().cpu().numpy()
    return numpy.asarray(array).astype(numpy.float64)


# supply_type name -> how values of a float and of an integer param are drawn.
_DRAWS = {
    "auto": (lambda rng, shape: rng.normal(0.0, 1.0, shape), lambda rng, shape: rng.integers(-2, 3, shape)),
    "integer": (lambda rng, shape: rng.integers(-2, 3, shape), lambda rng, shape: rng.integers(-2, 3, shape)),
    "uniform": (lambda rng, shape: rng.uniform(-1.0, 1.0, shape), lambda rng, shape: rng.integers(-2, 3, shape)),
    "normal": (lambda rng, shape: rng.normal(-1.0, 1.0, shape), lambda rng, shape: rng.integers(-2, 3, shape)),
    "randn": (lambda rng, shape: rng.standard_normal(shape), lambda rng, shape: rng.integers(-2, 3, shape)),
    "zero": (lambda rng, shape: numpy.zeros(shape), lambda rng, shape: numpy.zeros(shape)),
    "one": (lambda rng, shape: numpy.ones(shape), lambda rng, shape: numpy.ones(shape)),
}

_rng = numpy.random.default_rng()


def _draw(param, supply_type, target, kernel_name):
    if not param.is_tensor:
        raise ValueError(f"{kernel_name}: the autotuner draws no value for the scalar param "
                         f"'{param.name}'; give the inputs with set_autotune_inputs(...) or "
                         f"supply_prog")
    if not all(isinstance(dim, int) for dim in param.shape):
        raise ValueError(f"{kernel_name}: param '{param.name}' has the symbolic shape "
                         f"{list(param.shape)}; give the inputs with set_autotune_inputs(...) "
                         f"or supply_prog")
    name = str(getattr(supply_type, "name", supply_type or "auto")).lower()
    if name not in _DRAWS:
        raise ValueError(f"unknown supply_type {supply_type!r} (expected one of "
                         f"{', '.join(n.capitalize() for n in _DRAWS)})")
    draw_float, draw_int = _DRAWS[name]
    shape = tuple(param.shape)
    is_float = param.dtype.startswith(("float", "bfloat"))
    if param.dtype == "bool":
        values = _rng.integers(0, 2, shape)
    elif param.dtype.startswith("uint"):
        values = numpy.abs(draw_int(_rng, shape))
    else:
        values = (draw_float if is_float else draw_int)(_rng, shape)
    array = _allocate(shape, param.dtype, None, target)
    if type(array).__module__.startswith("torch"):
        torch = sys.modules["torch"]
        array.copy_(torch.from_numpy(numpy.asarray(values, dtype=numpy.float32)).to(array.dtype))
    else:
        array[...] = values
    return array
