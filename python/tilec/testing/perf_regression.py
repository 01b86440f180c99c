"""Performance regression scripts' helpers (TileLang's tilelang.testing.process_func and
regression): a regression_*.py script defines regression_<case>() functions that each time one
program through process_func, and ends with regression(), which runs them all and prints each
latency as "<name>: <latency>" for a collector comparing runs."""

import inspect
import time
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class PerfResult:
    name: str
    latency: float
    case: str = None


_results = []
_current_case = [None]  # the regression_ function running, without its prefix

_RETRIES = 5


def _without_prefix(name, prefix="regression_"):
    return name[len(prefix):] if name.startswith(prefix) else name


def process_func(func, name=None, /, **kwargs):
    """Runs func(**kwargs), which returns a latency, and records it under `name` (default: the
    module of func, without a "regression_" prefix). A latency that is not positive is measured
    again, up to 5 times, then warned about and not recorded."""
    result_name = _without_prefix(func.__module__ if name is None else name)
    latency = float(func(**kwargs))
    for _ in range(_RETRIES):
        if latency > 0:
            break
        latency = float(func(**kwargs))
    if latency <= 0:
        warnings.warn(f"{result_name}: latency {latency} is not positive; not recorded",
                      RuntimeWarning, stacklevel=2)
        return
    _results.append(PerfResult(result_name, latency, _current_case[0]))


def regression(prefixes=("regression_",), verbose=True):
    """Runs each function of the calling module whose name starts with one of `prefixes`, in
    name order (progress and time on stdout when verbose), then prints every latency they
    recorded as "<name>: <latency>", one a line."""
    caller = inspect.currentframe().f_back.f_globals
    cases = sorted((name, value) for name, value in caller.items()
                   if callable(value) and name.startswith(tuple(prefixes)))
    _results.clear()
    for index, (name, case) in enumerate(cases, 1):
        _current_case[0] = _without_prefix(name)
        if verbose:
            print(f"  [{index}/{len(cases)}] {_current_case[0]}", end="", flush=True)
        start = time.perf_counter()
        try:
            case()
        finally:
            _current_case[0] = None
        if verbose:
            print(f" ({time.perf_counter() - start:.2f}s)", flush=True)
    for result in _results:
        print(f"{result.name}: {result.latency}")
