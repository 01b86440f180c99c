"""@autotune: a jit function that tunes itself on its first call per argument
tuple.

    @tilec.autotune(configs=get_configs(), warmup=10, rep=10)
    @tilec.jit(out_idx=[3])
    def flashattn(batch, heads, seq_len, dim, block_M=64, block_N=64, threads=128):
        ...

    kernel = flashattn(1, 8, 1024, 64)             # tunes block_M, block_N, threads
    kernel = flashattn(1, 8, 1024, 64, block_M=128, block_N=64, threads=128)  # no tuning

A call that gives any tuned argument (a key of the configs) compiles what it
names, as a plain jit call would. The decorator also goes under @tilec.jit
(@jit over @autotune over the function). An eager kernel called with tensors
runs the best kernel on them; called with constants (or through .compile) it
returns the kernel.
"""

import functools
import inspect
import logging

from .. import capture
from .. import jit as jit_module
from ..jit import JitFunction
from ..language import PrimFunc
from .tuner import PASS_CONFIGS_KEY, AutoTuner, split_config

log = logging.getLogger("tilec")


def autotune(func=None, *, configs, warmup=25, rep=100, timeout=100, supply_type=None,
             ref_prog=None, supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01,
             skip_check=False, manual_check_prog=None, cache_input_tensors=False,
             do_not_specialize=None, early_stop=False, early_stop_factor=2.0, disk_cache=True):
    """@autotune(configs=...) over a tilec.jit function (or a plain one).
    configs: a list of dicts of tuned arguments, or a function of the call's
    arguments returning one. do_not_specialize: arguments whose values share
    one tuning. The rest are AutoTuner.set_profile_args' and run's."""
    if func is not None:
        raise TypeError("tilec.autotune takes its configs by name: write "
                        "@autotune(configs=...) above @tilec.jit")
    settings = dict(configs=configs, warmup=warmup, rep=rep, timeout=timeout,
                    supply_type=supply_type, ref_prog=ref_prog, supply_prog=supply_prog,
                    rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                    skip_check=skip_check, manual_check_prog=manual_check_prog,
                    cache_input_tensors=cache_input_tensors,
                    do_not_specialize=tuple(do_not_specialize or ()), early_stop=early_stop,
                    early_stop_factor=early_stop_factor, disk_cache=disk_cache)

    def decorate(function):
        if isinstance(function, JitFunction):
            return AutotunedFunction(function, settings)
        if isinstance(function, PrimFunc) or not inspect.isfunction(function):
            raise TypeError(f"tilec.autotune goes over a jit function (a factory or an eager "
                            f"kernel), not a {type(function).__qualname__}")
        return AutotunedFunction(jit_module.jit(function), settings)

    return decorate


class AutotunedFunction:
    def __init__(self, jit_function, settings):
        functools.update_wrapper(self, jit_function)
        self._jit = jit_function
        self._settings = settings
        self._tuned = {}  # the call's key -> (kernel, the jit function and arguments that run it)

    def __repr__(self):
        return f"<tilec.autotune {self.__qualname__}>"

    def __call__(self, *args, **kwargs):
        kernel, run = self._kernel(args, kwargs)
        if self._jit.style == "eager" and _has_tensor(args, kwargs):
            jit_function, arguments = run
            return jit_function(*args, **{**kwargs, **arguments})
        return kernel

    def compile(self, *args, **kwargs):
        """The tuned kernel for these arguments, without running it."""
        return self._kernel(args, kwargs)[0]

    def with_jit_options(self, **jit_options):
        """This tuning over the function jitted with other options (@jit over
        @autotune)."""
        return AutotunedFunction(jit_module.jit(self._jit.__wrapped__, **jit_options),
                                 self._settings)

    def _kernel(self, args, kwargs):
        """(the kernel for this call, (the jit function, config arguments) that run it)."""
        settings = self._settings
        given = self._jit.given_arguments(args, kwargs)
        key = _call_key({name: value for name, value in given.items()
                         if name not in settings["do_not_specialize"]})
        if key is not None and key in self._tuned:
            return self._tuned[key]
        tuner = AutoTuner(self._jit, settings["configs"]).set_profile_args(
            supply_type=settings["supply_type"], ref_prog=settings["ref_prog"],
            supply_prog=settings["supply_prog"], rtol=settings["rtol"], atol=settings["atol"],
            max_mismatched_ratio=settings["max_mismatched_ratio"],
            skip_check=settings["skip_check"], manual_check_prog=settings["manual_check_prog"],
            cache_input_tensors=settings["cache_input_tensors"])
        tuner._bind_call(args, kwargs)
        configs = tuner._resolve_configs()
        tuned_names = {name for config in configs for name in config if name != PASS_CONFIGS_KEY}
        if tuned_names & set(given):
            log.info("autotune of %s: the call gives %s; compiling it without tuning",
                     self.__qualname__, ", ".join(sorted(tuned_names & set(given))))
            entry = (self._jit.kernel_for(*args, **kwargs), (self._jit, {}))
        else:
            tuner.configs = configs
            result = tuner.run(settings["warmup"], settings["rep"], settings["timeout"],
                               early_stop=settings["early_stop"],
                               early_stop_factor=settings["early_stop_factor"],
                               disk_cache=settings["disk_cache"])
            arguments, pass_configs = split_config(result.config)
            entry = (result.kernel, (tuner._jit_function(pass_configs), arguments))
        if key is not None:
            self._tuned[key] = entry
        return entry


def _has_tensor(args, kwargs):
    return any(capture.is_tensor(v) for v in (*args, *kwargs.values()))


def _call_key(arguments):
    """A hashable key of the call's arguments (tensors by dtype and shape), or
    None when one can't be hashed."""
    return jit_module.cache_key({
        name: ("tensor", capture.tensor_dtype_name(v), tuple(int(d) for d in v.shape))
        if capture.is_tensor(v) else v for name, v in arguments.items()})
