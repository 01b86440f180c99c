"""AutoTuner: compile every config in parallel, check and time each, keep the
fastest.

    result = (AutoTuner.from_kernel(kernel=factory, configs=configs)
              .set_compile_args(out_idx=[-1], target="auto")
              .set_profile_args(ref_prog=ref, rtol=1e-2, atol=1e-2)
              .run(warmup=3, rep=20))
    result.latency, result.config, result.kernel

A config is a dict of the function's tunable arguments; its "pass_configs"
entry, if any, is merged over the compile arguments' pass configs.

Compiling is the core's C++, which runs without the GIL, so the configs
compile at once on a thread pool (TILEC_AUTOTUNE_WORKERS threads, default one
per CPU). Then each compiled config is checked and timed alone, so that timings
don't compete with compiles. A config that fails to compile, to run, to match
ref_prog, or to finish within `timeout` seconds is skipped, its reason logged
at INFO (and a WARNING counts them); when every config fails, RuntimeError
lists every reason.
"""

import concurrent.futures
import inspect
import logging
import os
import threading

from .. import jit as jit_module
from ..jit import JitFunction
from . import bench, cache
from .args import CompileArgs, ProfileArgs
from .capture import get_autotune_inputs
from .progress import progress
from .result import AutotuneResult

log = logging.getLogger("tilec")

PASS_CONFIGS_KEY = "pass_configs"  # a config's entry that is compile options, not an argument


class AutoTuner:
    """Tunes `fn` over `configs`: fn is a function returning (or defining) a
    @T.prim_func, an eager kernel function, or a tilec.jit function (whose
    out_idx, target and pass configs are the defaults of set_compile_args).
    configs is a list of dicts or a function of the call's arguments returning
    one."""

    def __init__(self, fn, configs):
        if isinstance(fn, JitFunction):
            self.fn = fn.__wrapped__
            self.compile_args = CompileArgs(out_idx=fn.out_idx, target=fn.target, arch=fn.arch,
                                            pass_configs=fn.pass_configs,
                                            compile_flags=fn.compile_flags)
        elif not inspect.isfunction(fn):
            raise TypeError(f"AutoTuner tunes a function of the tuned arguments (a factory "
                            f"returning a @T.prim_func, an eager kernel, or a jit function), "
                            f"not a {type(fn).__qualname__}")
        else:
            self.fn = fn
            self.compile_args = CompileArgs()
        self.configs = configs
        self.profile_args = ProfileArgs()
        self.ref_latency_cache = None
        self._call_args, self._call_kwargs = (), {}
        self._jit_functions = {}  # repr(pass configs) -> JitFunction

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target=None, execution_backend=None,
                         target_host=None, verbose=None, pass_configs=None, arch=None):
        """tilec.jit's out_idx, target ("auto" when None; TileLang's
        {"kind", "arch"} dicts too), arch and pass_configs. execution_backend,
        target_host and verbose are TileLang's and change nothing here: tilec
        has one runtime per target and logs through set_log_level."""
        base = self.compile_args
        self.compile_args = CompileArgs(
            out_idx=out_idx if out_idx is not None else base.out_idx,
            target=target if target is not None else base.target,
            arch=arch if arch is not None else base.arch,
            pass_configs=pass_configs if pass_configs is not None else base.pass_configs,
            compile_flags=base.compile_flags)
        self._jit_functions.clear()
        return self

    def set_profile_args(self, warmup=25, rep=100, timeout=30, supply_type=None, ref_prog=None,
                         supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01,
                         skip_check=False, manual_check_prog=None, cache_input_tensors=False,
                         backend="event"):
        """How configs are checked and timed (ProfileArgs). warmup, rep and
        timeout here are TileLang's too and, as there, run()'s own win."""
        self.profile_args = ProfileArgs(
            warmup=warmup, rep=rep, timeout=timeout, supply_type=supply_type, ref_prog=ref_prog,
            supply_prog=supply_prog, rtol=rtol, atol=atol,
            max_mismatched_ratio=max_mismatched_ratio, skip_check=skip_check,
            manual_check_prog=manual_check_prog, cache_input_tensors=cache_input_tensors,
            backend=backend)
        return self

    def run(self, warmup=25, rep=100, timeout=180, use_pipeline=False,
            enable_grouped_compile=False, group_compile_size=2, benchmark_devices=None,
            benchmark_multi_gpu=False, early_stop=False, early_stop_factor=2.0, disk_cache=True):
        """Tunes and returns an AutotuneResult. warmup and rep count runs of
        each config; timeout is seconds per config's check and timing. With
        early_stop, a config whose first runs take over early_stop_factor times
        the best so far stops there. disk_cache=False neither reads nor writes
        the cache. use_pipeline, enable_grouped_compile, group_compile_size,
        benchmark_devices and benchmark_multi_gpu are TileLang's: tilec
        compiles every config in parallel anyway and times on one device."""
        if early_stop and early_stop_factor < 1.0:
            raise ValueError(f"early_stop_factor must be at least 1.0, got {early_stop_factor}")
        configs = self._resolve_configs()
        arguments = [self._config_arguments(index, config) for index, config in enumerate(configs)]
        target, arch = self.compile_args.target_and_arch()
        target = jit_module.resolve_target(target)
        captured_inputs = get_autotune_inputs()
        record = None
        if disk_cache and cache.enabled(os.environ):
            call = {"args": list(self._call_args), "kwargs": self._call_kwargs,
                    "inputs": captured_inputs}
            record = cache.key(self.fn, call, configs, self.compile_args, self.profile_args,
                               target, arch)
        if record is not None:
            hit = cache.load(record, configs)
            if hit is not None:
                return self._cached_result(configs, arguments, *hit)

        kernels, reasons = self._compile_all(arguments)
        measurement = bench.Measurement(self.profile_args, captured_inputs)
        best = None  # (latency, index, kernel)
        with progress(len(kernels), "Benchmarking configurations") as bar:
            for index, kernel in kernels:
                baseline = best[0] * early_stop_factor if early_stop and best else None
                try:
                    latency = _with_timeout(
                        lambda stop: measurement.latency(kernel, warmup, rep, stop, baseline),
                        timeout)
                except Exception as error:  # noqa: BLE001 - any failure skips the config
                    reasons[index] = _reason("run", error)
                    log.info("autotune: config %d %s skipped: %s", index, configs[index],
                             reasons[index])
                else:
                    log.info("autotune: config %d %s: %.4f ms", index, configs[index], latency)
                    if best is None or latency < best[0]:
                        best = (latency, index, kernel)
                bar.update()
        name = self.fn.__qualname__
        if best is None:
            details = "\n".join(f"  config {i} {configs[i]}: {reasons[i]}" for i in sorted(reasons))
            raise RuntimeError(f"autotune of {name}: none of the {len(configs)} configs "
                               f"compiled, ran and passed its check:\n{details}")
        if reasons:
            log.warning("autotune of %s: %d of %d configs skipped (set_log_level('INFO') lists "
                        "why)", name, len(reasons), len(configs))
        latency, index, kernel = best
        self.ref_latency_cache = measurement.ref_latency
        if record is not None:
            cache.store(record, index, configs[index], latency, measurement.ref_latency)
        return self._result(kernel, configs[index], latency, measurement.ref_latency)

    def __call__(self):
        return self.run()

    def _bind_call(self, args, kwargs):
        """The arguments of the call being tuned (the @autotune face's), which
        every config completes."""
        self._call_args, self._call_kwargs = tuple(args), dict(kwargs)

    def _resolve_configs(self):
        configs = self.configs
        if callable(configs):
            configs = configs(*self._call_args, **self._call_kwargs)
        configs = list(configs) if configs is not None else []
        if not configs:
            raise ValueError(f"autotune of {self.fn.__qualname__}: no configs to tune")
        for index, config in enumerate(configs):
            if not isinstance(config, dict):
                raise TypeError(f"autotune of {self.fn.__qualname__}: config {index} is a "
                                f"{type(config).__qualname__}, not a dict of arguments")
        return configs

    def _config_arguments(self, index, config):
        """Config `index` checked against the function's parameters, split
        into (its arguments, its pass configs)."""
        parameters = inspect.signature(self.fn).parameters
        unknown = [key for key in config if key != PASS_CONFIGS_KEY and key not in parameters]
        if unknown:
            raise ValueError(f"autotune of {self.fn.__qualname__}: config {index} names "
                             f"{', '.join(map(repr, unknown))}, which "
                             f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'}"
                             f" of {self.fn.__name__}({', '.join(parameters)})")
        return split_config(config)

    def _jit_function(self, pass_configs):
        """The jit function that compiles with the compile arguments and, over
        them, a config's pass configs."""
        merged = {**(self.compile_args.pass_configs or {}), **(pass_configs or {})}
        key = repr(sorted(merged.items(), key=lambda item: str(item[0])))
        if key not in self._jit_functions:
            target, arch = self.compile_args.target_and_arch()
            self._jit_functions[key] = jit_module.jit(self.fn, out_idx=self.compile_args.out_idx,
                                                      target=target, arch=arch,
                                                      pass_configs=merged,
                                                      compile_flags=self.compile_args.compile_flags)
        return self._jit_functions[key]

    def _compile(self, config_arguments):
        arguments, pass_configs = config_arguments
        return self._jit_function(pass_configs).kernel_for(
            *self._call_args, **{**self._call_kwargs, **arguments})

    def _compile_all(self, arguments):
        """[(index, kernel)] of the configs that compiled, and {index: reason}
        of those that didn't."""
        for _, pass_configs in arguments:  # made here: the workers only read the dict
            self._jit_function(pass_configs).style  # noqa: B018 - parsed once, not per worker
        workers = min(len(arguments), compile_workers())
        kernels, reasons = [], {}
        with progress(len(arguments), "Compiling configurations") as bar, \
                concurrent.futures.ThreadPoolExecutor(
                    workers, thread_name_prefix="tilec-autotune") as pool:
            futures = {pool.submit(self._compile, a): index for index, a in enumerate(arguments)}
            for future in concurrent.futures.as_completed(futures):
                index = futures[future]
                try:
                    kernels.append((index, future.result()))
                except Exception as error:  # noqa: BLE001 - any failure skips the config
                    reasons[index] = _reason("compile", error)
                    log.info("autotune: config %d skipped: %s", index, reasons[index])
                bar.update()
        kernels.sort(key=lambda item: item[0])
        return kernels, reasons

    def _cached_result(self, configs, arguments, index, latency, ref_latency):
        log.info("autotune of %s: best config %s (%.4f ms) from the cache in %s; not "
                 "benchmarking", self.fn.__qualname__, configs[index], latency, cache.folder())
        return self._result(self._compile(arguments[index]), configs[index], latency, ref_latency)

    def _result(self, kernel, config, latency, ref_latency):
        kernel.latency, kernel.config, kernel.ref_latency = latency, dict(config), ref_latency
        return AutotuneResult(latency=latency, config=dict(config), ref_latency=ref_latency,
                              libcode=kernel.get_kernel_source(), func=self.fn, kernel=kernel)


def split_config(config):
    """(the config's arguments, its pass configs or None)."""
    return ({k: v for k, v in config.items() if k != PASS_CONFIGS_KEY},
            config.get(PASS_CONFIGS_KEY))


def compile_workers():
    """TILEC_AUTOTUNE_WORKERS, else the CPUs this process may use."""
    text = os.environ.get("TILEC_AUTOTUNE_WORKERS", "")
    if text:
        try:
            count = int(text)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"TILEC_AUTOTUNE_WORKERS={text!r}: expected a positive integer")
        return count
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _with_timeout(measure, timeout):
    """measure(stop) on a thread of its own, given up after `timeout`
    seconds (<= 0 or None: no limit). A measurement given up stops at its next
    kernel run (stop is set); one kernel run that never returns can't be
    stopped from Python and keeps its thread."""
    if not timeout or timeout <= 0:
        return measure(None)
    stop = threading.Event()
    outcome = {}

    def body():
        try:
            outcome["latency"] = measure(stop)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=body, name="tilec-autotune-bench", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        stop.set()
        raise TimeoutError(f"timed out after {timeout} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["latency"]


def _reason(stage, error):
    text = str(error).strip() or type(error).__name__
    if isinstance(error, AssertionError):
        stage = "mismatch"
    elif not isinstance(error, TimeoutError):
        text = f"{type(error).__name__}: {text}"
    return f"{stage}: {text}"
