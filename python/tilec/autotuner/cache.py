"""The disk cache of tuning results: which config won, and its latency.

A record lives in tilec's cache folder (TILEC_CACHE_DIR, ~/.cache/tilec) under
autotuner/, kept by the core's rules (0700 folders, 0600 files, a foreign or
damaged record reads as missing: docs/reliability.md). It is keyed by a hash of
everything the result depends on: the tuned function's source and the values
of the free names it reads (helpers' sources included), the call's arguments,
the configs, the compile and profile arguments, the target and arch, and
tilec's version. Where one of those has no stable identity (an object of
unknown kind, a callback without source) nothing is cached.

The record holds the winner's index in the configs (so the config comes back
with its Python types), the config's repr as a check, and the latencies.

The cache is off with TILEC_AUTOTUNE_DISABLE_CACHE=1, or TileLang's
TILELANG_AUTO_TUNING_DISABLE_CACHE=1 or TILELANG_DISABLE_CACHE=1, or
disk_cache=False.
"""

import enum
import hashlib
import inspect
import json
import logging
import numbers
import types

from .. import _core, capture

log = logging.getLogger("tilec")

FOLDER = "autotuner"
_OFF_SWITCHES = ("TILEC_AUTOTUNE_DISABLE_CACHE", "TILELANG_AUTO_TUNING_DISABLE_CACHE",
                 "TILELANG_DISABLE_CACHE")


def enabled(environ):
    return not any(environ.get(name, "").lower() in ("1", "true", "yes", "on")
                   for name in _OFF_SWITCHES)


class Unkeyable(Exception):
    """A value the key can't stand for faithfully."""


def key(func, call_arguments, configs, compile_args, profile_args, target, arch):
    """The record's name (a hex digest), or None when something has no
    stable identity (the DEBUG log says what)."""
    try:
        parts = {
            "version": _core.version(),
            "function": _function_identity(func),
            "arguments": _stable(call_arguments),
            "configs": _stable(configs),
            "out_idx": _stable(compile_args.out_idx),
            "pass_configs": _stable(compile_args.pass_configs or {}),
            "target": [target, arch or ""],
            "profile": _stable({name: getattr(profile_args, name) for name in (
                "warmup", "rep", "supply_type", "rtol", "atol", "max_mismatched_ratio",
                "skip_check", "cache_input_tensors")}),
            "callbacks": [None if cb is None else _function_identity(cb) for cb in (
                profile_args.ref_prog, profile_args.supply_prog, profile_args.manual_check_prog)],
        }
    except Unkeyable as why:
        log.debug("autotune of %s: results not cached: %s", func.__qualname__, why)
        return None
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(record_name, configs):
    """(index, latency, ref_latency) of the cached winner, or None."""
    text = _core.read_cache_record(FOLDER, record_name)
    if text is None:
        return None
    try:
        record = json.loads(text)
        index = record["index"]
        if not (0 <= index < len(configs)) or record["config"] != repr(configs[index]):
            return None
        return index, record["latency"], record["ref_latency"]
    except (ValueError, KeyError, TypeError):
        return None


def store(record_name, index, config, latency, ref_latency):
    record = {"index": index, "config": repr(config), "latency": latency,
              "ref_latency": ref_latency}
    try:
        _core.write_cache_record(FOLDER, record_name, json.dumps(record))
    except RuntimeError as error:  # a full disk or a refused folder: tuning still succeeded
        log.warning("autotune: could not store the result: %s", error)


def folder():
    return _core.cache_record_folder(FOLDER)


def _function_identity(func):
    if not isinstance(func, types.FunctionType):
        raise Unkeyable(f"{func!r} is not a Python function")
    try:
        text = capture.source_text(func)
        free_values = capture.free_name_values(func, text)
    except (ValueError, SyntaxError) as error:
        raise Unkeyable(f"no source text of {func.__qualname__} ({error})") from None
    return [text.name, text.source,
            {name: _free_value(value) for name, value in free_values.items()}]


def _free_value(value):
    """A free name's value: modules and classes by name, functions by their
    source (a jit or autotuned function by its function's), data by _stable."""
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__]
    if isinstance(value, type):
        return ["class", value.__module__, value.__qualname__]
    if isinstance(value, types.BuiltinFunctionType):
        return ["builtin", value.__qualname__]
    function = inspect.unwrap(value)
    if isinstance(function, types.FunctionType):
        try:
            return ["function", type(value).__qualname__, inspect.getsource(function)]
        except (OSError, TypeError):
            return ["function", function.__module__, function.__qualname__]
    return _stable(value)


def _stable(value):
    """`value` as JSON with its Python types kept apart."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__qualname__, value.name]
    if isinstance(value, numbers.Integral):
        return ["int", int(value)]
    if isinstance(value, numbers.Real):
        return ["float", repr(float(value))]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_stable(v) for v in value]]
    if isinstance(value, dict):
        return ["dict", sorted([str(k), _stable(v)] for k, v in value.items())]
    if capture.is_tensor(value):
        return ["tensor", capture.tensor_dtype_name(value), [int(d) for d in value.shape]]
    tagged = capture.to_core_value(value)  # dtypes, symbolic dims, prim_funcs and macros
    if tagged[0] == "opaque":
        raise Unkeyable(f"a value of type {type(value).__qualname__}")
    return _tagged(tagged)


def _host_identity(obj):
    """What stands for a Python object the core calls into (capture's "host"): a module, class
    or builtin function by its qualified name; any other object has no stable identity."""
    if isinstance(obj, types.ModuleType):
        return ["module", obj.__name__]
    if isinstance(obj, (type, types.BuiltinFunctionType)):
        return ["host", f"{obj.__module__}.{obj.__qualname__}"]
    raise Unkeyable(f"a value of type {type(obj).__qualname__}")


def _tagged(value):
    """A tagged value whose every part is trusted: an opaque object stands only
    for its type, which isn't enough, but for a module."""
    if isinstance(value, dict):
        return {name: _tagged(v) for name, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and value[0] == "opaque":
            raise Unkeyable(f"a value of type {value[1]}")
        if len(value) == 2 and value[0] == "host":
            return _host_identity(value[1])
        return [_tagged(v) for v in value]
    return value
