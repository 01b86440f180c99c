"""tilec.jit: compile a kernel written in either of the two styles.

- factory (lazy): the function runs in Python, computing constants, and
  returns (or just defines) a @T.prim_func; calling it returns a Kernel.
- eager: the function body is the kernel; its non-tensor parameters are
  compile-time constants and its tensor arguments give their shapes and
  dtypes. Called with tensors it compiles (once per fitting signature) and
  runs; called with constants only it returns the Kernel.

Which style a function is written in is the core's call (it parses the source).
"""

import enum
import functools
import inspect
import logging
import shlex
import time

from . import _core, capture
from .kernel import Kernel
from .language import PrimFunc

log = logging.getLogger("tilec")


def jit(func=None, *, out_idx=None, target="auto", arch=None, pass_configs=None,
        compile_flags=None):
    """@jit, @jit(out_idx=..., target=...), or jit(f, target="cpu").

    target: "cpu", "cuda", "hip", or "auto" (cuda when a GPU is present, else cpu).
    arch: the GPU architecture of target cuda ("sm_80", "sm_90a", ...; None
    takes the current device's) or hip ("gfx90a", "gfx940", "gfx906"; needed).
    With an arch, compiling needs no GPU (only NVRTC); running does. Ignored
    when "auto" picks the CPU.
    compile_flags: nvcc's flags, a list of str or one str split as a shell
    would; those NVRTC understands reach it, --use_fast_math is pass config
    tilec.fast_math, nvcc's own have no effect (docs/language.md lists them)."""
    flags = normalize_compile_flags(compile_flags)

    def wrap(f):
        from .autotuner.decorator import AutotunedFunction  # the autotuner builds on jit

        if isinstance(f, AutotunedFunction):  # @jit over @autotune
            return f.with_jit_options(out_idx=out_idx, target=target, arch=arch,
                                      pass_configs=pass_configs, compile_flags=flags)
        if not (isinstance(f, PrimFunc) or inspect.isfunction(f)):
            raise TypeError(f"tilec.jit takes a function or a @T.prim_func, not a "
                            f"{type(f).__qualname__}")
        return JitFunction(f, out_idx=out_idx, target=target, arch=arch,
                           pass_configs=pass_configs, compile_flags=flags)

    return wrap if func is None else wrap(func)


def compile(func, out_idx=None, target="auto", arch=None, pass_configs=None, compile_flags=None):
    """The Kernel of a @T.prim_func (TileLang's tilelang.compile); the
    arguments are jit's."""
    if not isinstance(func, PrimFunc):
        raise TypeError(f"tilec.compile takes a @T.prim_func, not a {type(func).__qualname__}; "
                        f"a jit function compiles with its .compile(...)")
    return jit(func, out_idx=out_idx, target=target, arch=arch, pass_configs=pass_configs,
               compile_flags=compile_flags).compile()


def normalize_compile_flags(compile_flags):
    """compile_flags (None, a str of flags split as a shell would, or a list or tuple of str)
    as a tuple of str; the core reads what each means."""
    if compile_flags is None:
        return ()
    if isinstance(compile_flags, str):
        return tuple(shlex.split(compile_flags))
    if not isinstance(compile_flags, (list, tuple)):
        raise TypeError(f"compile_flags is a list of str or a str, not a "
                        f"{type(compile_flags).__qualname__}")
    for flag in compile_flags:
        if not isinstance(flag, str):
            raise TypeError(f"compile_flags holds str flags, not {flag!r} (a "
                            f"{type(flag).__qualname__})")
    return tuple(compile_flags)


def resolve_target(target):
    if target != "auto":
        return target
    return "cuda" if _core.cuda_available() else "cpu"


def core_pass_configs(pass_configs):
    """Pass configs as the core's {str: str}: a key as its text (a PassConfigKey as its value),
    bools as "true"/"false"."""
    def text(value):
        if isinstance(value, enum.Enum):
            return str(value.value)
        return str(value).lower() if isinstance(value, bool) else str(value)

    return {text(key): text(value) for key, value in (pass_configs or {}).items()}


def cache_key(values):
    """A hashable key for a {name: value} dict, or None when a value can't be
    hashed (then nothing is cached). Types are part of the key: 1, 1.0 and
    True compile differently."""
    def normalize(value):
        if isinstance(value, (list, tuple)):
            return (type(value), tuple(normalize(v) for v in value))
        return (type(value), value)

    key = tuple((name, normalize(value)) for name, value in values.items())
    try:
        hash(key)
    except TypeError:
        return None
    return key


# Argument types whose values hash by value and hold no others: a call made of them alone is
# keyed without cache_key's normalizing.
_FLAT_TYPES = frozenset((int, float, bool, str, type(None)))


def call_key(args, kwargs):
    """A factory call's cache key, its arguments as given, or None as cache_key gives. Each
    call looks it up, so plain values skip cache_key's per-value work: their types go into the
    key beside them (1, 1.0 and True are equal but compile differently)."""
    types = (*map(type, args), *map(type, kwargs.values()))
    if _FLAT_TYPES.issuperset(types):
        return types, args, tuple(kwargs.items())
    return cache_key({**dict(enumerate(args)), **kwargs})


class JitFunction:
    def __init__(self, func, *, out_idx=None, target="auto", arch=None, pass_configs=None,
                 compile_flags=()):
        functools.update_wrapper(self, func.func if isinstance(func, PrimFunc) else func)
        self._func = func
        self.out_idx = out_idx
        self.target = target
        self.arch = arch
        self.pass_configs = dict(pass_configs or {})
        self.compile_flags = normalize_compile_flags(compile_flags)
        self._style = "prim_func" if isinstance(func, PrimFunc) else None
        self._kernels = {}  # cache_key(arguments) -> Kernel (prim_func and factory styles)
        # A factory call's arguments as given (positions and names, not bound to the
        # signature) -> its Kernel: a cache hit skips binding, which costs tens of microseconds.
        self._calls = {}
        self._parameters = None  # inspect.signature(func), made once
        self._eager_kernels = {}  # cache_key(constants) -> [(Kernel, tensor signature)]

    def __repr__(self):
        return f"<tilec.jit {self.__qualname__}>"

    @property
    def style(self):
        """"factory", "eager" or "prim_func" (jit applied to a @T.prim_func)."""
        if self._style is None:
            text = capture.source_text(self._func)
            self._style = _core.function_style(text.source, text.filename, text.first_line,
                                               text.name)
        return self._style

    def __call__(self, *args, **kwargs):
        if self.style == "prim_func":
            return self.compile()(*args, **kwargs)
        if self.style == "factory":
            return self._factory_kernel(args, kwargs)
        arguments = self._bind(args, kwargs)
        kernel = self._eager_kernel(arguments)
        if not any(capture.is_tensor(value) for value in arguments.values()):
            return kernel
        return kernel.run([self._eager_argument(kernel, i, arguments)
                           for i in range(len(kernel.params))])

    def compile(self, *args, **constants):
        """The Kernel for these arguments: the factory's arguments, or an eager
        kernel's tensors and constants by position or name, or its constants
        alone with the T.const dims by name (kernel_for)."""
        if self.style == "prim_func":
            return self._cached(cache_key({}), lambda: self._compile_prim_func(self._func))
        if self.style == "factory":
            return self._factory_kernel(args, constants)
        return self.kernel_for(*args, **constants)

    def kernel_for(self, *args, **kwargs):
        """The Kernel a call with these arguments runs, compiled (or from the
        cache) but not run: a factory's arguments, or an eager kernel's tensors
        and constants, by position or name (tensors left out: constants only,
        with the T.const dims by name)."""
        if self.style != "eager":
            return self.compile(*args, **kwargs)
        arguments = self.given_arguments(args, kwargs)
        for name, parameter in self._signature().parameters.items():
            if name not in arguments and parameter.default is not inspect.Parameter.empty:
                arguments[name] = parameter.default
        return self._eager_kernel(arguments)

    def given_arguments(self, args, kwargs):
        """{name: value} of a call's arguments, defaults left out; an eager
        kernel's T.const dims given by name are kept too."""
        parameters = self._signature().parameters
        constants = {} if self.style != "eager" else {
            name: value for name, value in kwargs.items() if name not in parameters}
        named = {name: value for name, value in kwargs.items() if name not in constants}
        return {**self._signature().bind_partial(*args, **named).arguments, **constants}

    def get_kernel_source(self, *args, **kwargs):
        """The generated source of the kernel a call with these arguments runs, compiled (or
        from the cache) but not run: kernel_for's arguments, so a factory's arguments, or an
        eager kernel's tensors and constants (T.const dims by name); none gives the kernel of
        compile()."""
        return self.kernel_for(*args, **kwargs).get_kernel_source()

    get_source = get_kernel_source

    def _signature(self):
        if self._parameters is None:
            self._parameters = inspect.signature(self._func)
        return self._parameters

    def _bind(self, args, kwargs):
        bound = self._signature().bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def _cached(self, key, make_kernel):
        if key is not None and key in self._kernels:
            log.debug("%s: kernel cache hit", self.__qualname__)
            return self._kernels[key]
        kernel = make_kernel()
        if key is not None:
            self._kernels[key] = kernel
        return kernel

    def _factory_kernel(self, args, kwargs):
        call = call_key(args, kwargs)
        kernel = self._calls.get(call) if call is not None else None
        if kernel is not None:
            log.debug("%s: kernel cache hit", self.__qualname__)
            return kernel
        arguments = self._bind(args, kwargs)
        kernel = self._cached(cache_key(arguments), lambda: self._run_factory(args, kwargs))
        if call is not None:
            self._calls[call] = kernel
        return kernel

    def _run_factory(self, args, kwargs):
        start = time.perf_counter()
        with capture.recording_prim_funcs() as defined:
            result = self._func(*args, **kwargs)
        if isinstance(result, PrimFunc):
            prim_func = result
        elif result is None and len(defined) == 1:
            prim_func = defined[0]
        elif result is None:
            raise ValueError(f"jit factory {self.__qualname__} returned None and defined "
                             f"{len(defined)} @T.prim_func functions; it must return one, or "
                             f"define exactly one")
        else:
            raise TypeError(f"jit factory {self.__qualname__} returned a "
                            f"{type(result).__qualname__}; it must return a @T.prim_func")
        log.debug("%s: ran the factory in %.2f ms", self.__qualname__,
                  (time.perf_counter() - start) * 1e3)
        return self._compile_prim_func(prim_func)

    def _compile_prim_func(self, prim_func):
        return self._compile(lambda: capture.function_value(prim_func.func, prim_func.source,
                                                            prim_func.scope))

    def _eager_kernel(self, arguments):
        tensors = {name: v for name, v in arguments.items() if capture.is_tensor(v)}
        constants = {name: v for name, v in arguments.items() if name not in tensors}
        signature = {name: (capture.tensor_dtype_name(t), len(t.shape))
                     for name, t in tensors.items()}
        key = cache_key(constants)
        for kernel, kernel_signature in self._eager_kernels.get(key, []):
            if kernel_signature == signature and _fits_const_dims(kernel, tensors):
                log.debug("%s: kernel cache hit", self.__qualname__)
                return kernel
        parameters = {name: capture.to_core_value(v) for name, v in constants.items()}
        parameters.update({name: capture.tensor_spec(t) for name, t in tensors.items()})
        kernel = self._compile(lambda: capture.function_value(self._func, parameters=parameters))
        if key is not None:
            self._eager_kernels.setdefault(key, []).append((kernel, signature))
        return kernel

    def _eager_argument(self, kernel, index, arguments):
        """The call's argument for the kernel's param `index`, matched by name;
        None for an output to allocate."""
        param = kernel.params[index]
        if param.name in arguments:
            return arguments[param.name]
        if index in kernel.out_idx:
            return None
        raise ValueError(f"{self.__qualname__}: kernel parameter '{param.name}' is neither an "
                         f"argument of the call nor an output")

    def _compile(self, capture_function):
        """Compiles the function value (source and tagged bindings) that
        `capture_function` captures."""
        start = time.perf_counter()
        source, filename, first_line, name, bindings = capture_function()
        log.debug("%s: captured %s and %d free names in %.2f ms", self.__qualname__, name,
                  len(bindings), (time.perf_counter() - start) * 1e3)
        target = resolve_target(self.target)
        arch = "" if self.target == "auto" and target != "cuda" else self.arch or ""
        start = time.perf_counter()
        core_kernel = _core.compile(source, filename, first_line, name, bindings, target, arch,
                                    core_pass_configs(self.pass_configs), list(self.compile_flags))
        log.debug("%s: compiled %s for %s in %.3f s", self.__qualname__, name, target,
                  time.perf_counter() - start)
        return Kernel(core_kernel, self.out_idx)


def _fits_const_dims(kernel, tensors):
    for param, dim, value in kernel.const_dims:
        tensor = tensors.get(kernel.params[param].name)
        if tensor is None or dim >= len(tensor.shape) or tensor.shape[dim] != value:
            return False
    return True
