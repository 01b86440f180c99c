"""Pure-Python tests of the Python face: source and free-name capture, value
conversion, the T namespace's Python-level objects, jit's styles and caches,
and Kernel's argument handling. The core is replaced by small fakes here, so
these run whether or not libtilec is built."""

import importlib
import importlib.util
import inspect
import sys
import types

import ml_dtypes
import numpy as np
import pytest

try:
    import tilec
except ImportError:
    if importlib.util.find_spec("tilec") is None:
        raise
    # The extension isn't built: these tests use only the names below from it.
    stand_in = types.ModuleType("tilec._core")
    stand_in.CompileError = type("CompileError", (Exception,), {})
    stand_in.version = lambda: "0+unbuilt"
    stand_in.set_log_level = lambda level: None
    sys.modules["tilec._core"] = stand_in
    import tilec

import tilec.language as T
from tilec import capture
from tilec.jit import JitFunction, cache_key, call_key, core_pass_configs

jit_module = importlib.import_module("tilec.jit")
from tilec.kernel import Kernel, _core_arg, normalize_out_idx  # noqa: E402

BLOCK = 64


# ------------------------------------------------------------ free names


def test_free_names_from_closure_globals_and_nested_functions():
    depth = 3

    def kernel_body():
        def helper():
            return BLOCK + depth

        return helper

    values = capture.free_name_values(kernel_body)
    assert values == {"BLOCK": 64, "depth": 3}


def test_own_locals_attributes_and_builtins_are_not_free_names():
    def body(x):
        local = x + BLOCK
        return np.copy(local) + len(range(local))

    text = capture.source_text(body)
    assert capture.referenced_names(body, text) == {"BLOCK", "np", "len", "range"}
    # builtins are the language's own; "copy" is an attribute, not a name
    assert capture.free_name_values(body) == {"BLOCK": 64, "np": np}


def test_unassigned_closure_cell_is_left_out():
    def factory():
        def body():
            return later

        early = body
        later = 1  # noqa: F841 - assigned after body is defined
        return early

    body = factory()
    assert capture.free_name_values(body) == {"later": 1}


def test_names_only_annotations_use_come_from_the_defining_scope():
    def factory(M, dtype):
        rows = M * 2

        @T.prim_func
        def main(A: T.Tensor((rows, M), dtype)):
            T.clear(A)

        return main

    main = factory(8, "float16")
    assert main.scope == {"rows": 16, "M": 8, "dtype": "float16"}
    bindings = capture.to_core_value(main)[1][4]
    assert bindings["rows"] == ("int", 16) and bindings["dtype"] == ("str", "float16")
    assert bindings["T"] == ("module", "tilec.language")


def test_source_text_keeps_indentation_and_file_lines():
    def indented(x):
        return x

    text = capture.source_text(indented)
    assert text.source.startswith("    def indented(x):")
    assert text.filename == __file__
    assert text.first_line == inspect.getsourcelines(indented)[1]
    assert text.name == "indented"


def test_source_text_of_decorated_function_includes_decorator():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        T.clear(A)

    assert main.source.source.lstrip().startswith("@T.prim_func")
    with open(__file__) as f:
        lines = f.read().splitlines()
    assert lines[main.source.first_line - 1].strip() == "@T.prim_func"


# ------------------------------------------------------------ value conversion


@pytest.mark.parametrize("value, tagged", [
    (None, ("none", None)),
    (True, ("bool", True)),
    (np.bool_(False), ("bool", False)),
    (7, ("int", 7)),
    (np.int32(7), ("int", 7)),
    (2.5, ("float", 2.5)),
    (np.float32(0.5), ("float", 0.5)),
    ("x", ("str", "x")),
    ((1, "a"), ("tuple", [("int", 1), ("str", "a")])),
    ([1, [2.0]], ("list", [("int", 1), ("list", [("float", 2.0)])])),
    (2**70, ("opaque", "int (beyond 64 bits)")),
])
def test_plain_values(value, tagged):
    assert capture.to_core_value(value) == tagged


def test_dtypes_of_tilec_numpy_ml_dtypes_and_torch():
    assert capture.to_core_value(T.float16) == ("dtype", "float16")
    assert capture.to_core_value(np.dtype("float32")) == ("dtype", "float32")
    assert capture.to_core_value(np.float64) == ("dtype", "float64")
    assert capture.to_core_value(ml_dtypes.bfloat16) == ("dtype", "bfloat16")
    assert capture.to_core_value(np.dtype(ml_dtypes.float8_e4m3fn)) == ("dtype", "float8_e4m3fn")
    torch_dtype = type("dtype", (), {"__module__": "torch", "__str__": lambda self: "torch.bfloat16"})
    assert capture.to_core_value(torch_dtype()) == ("dtype", "bfloat16")


def test_symbolic_dims_and_modules():
    assert capture.to_core_value(T.symbolic("n")) == ("symbolic", ("n", "int32"))
    assert capture.to_core_value(T.dynamic("m", "int64")) == ("symbolic", ("m", "int64"))
    assert capture.to_core_value(T) == ("module", "tilec.language")
    assert capture.to_core_value(tilec) == ("module", "tilec")
    assert capture.to_core_value(np) == ("host", np)  # read and called in Python (test_host_values.py)


def test_prim_func_macro_and_helper_functions_carry_source_and_bindings():
    scale = 2

    @T.macro
    def double(x):
        return x * scale

    @T.prim_func
    def main(A: T.Tensor((BLOCK,), "float32")):
        A[0] = double(A[0])

    tag, (source, filename, first_line, name, bindings) = capture.to_core_value(main)
    assert (tag, name, filename) == ("function", "main", __file__)
    assert "A[0] = double(A[0])" in source
    assert first_line == main.source.first_line
    assert bindings["BLOCK"] == ("int", 64)
    assert bindings["T"] == ("module", "tilec.language")
    macro_tag, macro_value = bindings["double"]
    assert macro_tag == "function" and macro_value[4]["scale"] == ("int", 2)

    def helper(x):
        return x + BLOCK

    assert capture.to_core_value(helper)[0] == "function"


def test_unusable_values_are_opaque():
    assert capture.to_core_value(object()) == ("opaque", "object")
    assert capture.to_core_value(lambda x: x) == ("opaque", "function")
    assert capture.to_core_value({"a": 1}) == ("opaque", "dict")
    assert capture.to_core_value(T.Tensor((4,), "float32"))[0] == "opaque"


def recursive_helper(n):
    return recursive_helper(n - 1)


def test_recursive_helper_is_opaque_where_it_recurses():
    tag, value = capture.to_core_value(recursive_helper)
    assert tag == "function"
    assert value[4]["recursive_helper"] == ("opaque", "function recursive_helper (recursive)")


@T.prim_func
def names_itself(A: T.Tensor((8,), "float32")):
    names_itself[0] = 1.0


def test_prim_func_naming_itself_is_opaque_where_it_recurses():
    # Found by tests/fuzz/jit_mutants.py: this recursed until RecursionError.
    tag, value = capture.to_core_value(names_itself)
    assert tag == "function"
    assert value[4]["names_itself"] == ("opaque", "function names_itself (recursive)")


def test_tensors_and_their_specs():
    a = np.zeros((2, 3), np.float16)
    b = np.zeros((4,), ml_dtypes.bfloat16)
    assert capture.is_tensor(a) and capture.is_tensor(b)
    assert not capture.is_tensor(np.float32) and not capture.is_tensor(3)
    assert capture.tensor_spec(a) == ("tensor_spec", ([2, 3], "float16"))
    assert capture.tensor_spec(b) == ("tensor_spec", ([4], "bfloat16"))


def test_launch_arguments():
    assert _core_arg(np.int64(3)) == 3 and type(_core_arg(np.int64(3))) is int
    assert _core_arg(np.bool_(True)) is True
    assert type(_core_arg(np.float32(1.5))) is float
    b = np.ones((2, 2), ml_dtypes.bfloat16)
    view, name = _core_arg(b)
    assert (view.dtype, name) == (np.uint16, "bfloat16")
    assert np.shares_memory(view, b)
    view8, name8 = _core_arg(np.ones(3, ml_dtypes.float8_e5m2))
    assert (view8.dtype, name8) == (np.uint8, "float8_e5m2")
    a = np.ones(3, np.float32)
    assert _core_arg(a) is a


# ------------------------------------------------------------ the T namespace


def test_tensor_descriptors_both_syntaxes():
    M, K = 128, T.symbolic("K")
    assert T.Tensor((M, K), "float16") == T.Tensor[(M, K), "float16"]
    assert T.Tensor[(M, K), T.float16].shape == (M, K)
    assert T.Buffer([M], "int32").shape == (M,)
    assert T.Tensor(M).shape == (M,) and T.Tensor(M).dtype == "float32"
    with pytest.raises(TypeError, match="takes a shape and a dtype"):
        T.Tensor[(M, K)]


def test_symbolic_arithmetic_evaluates_in_annotations():
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n * 2, T.ceildiv(n, 32) + 1), "float32")):
        T.clear(A)

    assert repr(main.__annotations__["A"].shape[0]) == "(T.symbolic('n') * 2)"


def test_dtypes_and_aliases():
    assert T.float16 == "float16" and isinstance(T.float16, str)
    assert T.half is T.float16 and T.float is T.float32 and T.double is T.float64
    assert T.float8_e4m3fn is T.float8_e4m3 and T.float8_e4m3 == "float8_e4m3"
    assert T.bool == "bool" and repr(T.bfloat16) == "T.bfloat16"
    assert {"float16": 1}[T.float16] == 1


def test_ceildiv():
    assert T.ceildiv(1024, 32) == 32
    assert T.ceildiv(1025, 32) == 33
    assert T.ceildiv(1, 32) == 1


def test_factory_records_each_prim_func_it_defines():
    with capture.recording_prim_funcs() as outer:
        @T.prim_func
        def first(A: T.Tensor((4,), "float32")):
            T.clear(A)

        with capture.recording_prim_funcs() as inner:
            @T.prim_func
            def second(A: T.Tensor((4,), "float32")):
                T.clear(A)

    assert outer == [first] and inner == [second]


# ------------------------------------------------------------ jit


def plain(M, N=8):
    return M, N


def test_jit_forms_preserve_the_function():
    forms = [tilec.jit(plain), tilec.jit()(plain), tilec.jit(out_idx=[-1], target="cpu")(plain),
             tilec.jit(plain, target="cpu")]
    for jitted in forms:
        assert isinstance(jitted, JitFunction)
        assert jitted.__wrapped__ is plain
        assert jitted.__name__ == "plain" and jitted.__doc__ == plain.__doc__
    assert forms[2].out_idx == [-1] and forms[2].target == "cpu"
    assert forms[0].target == "auto"


def test_jit_of_a_prim_func():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        T.clear(A)

    jitted = tilec.jit(main, target="cpu")
    assert jitted.style == "prim_func" and jitted.__name__ == "main"


def test_out_idx_normalization():
    assert normalize_out_idx(None, 3, "k") is None
    assert normalize_out_idx(-1, 3, "k") == [2]
    assert normalize_out_idx([0, -1], 3, "k") == [0, 2]
    assert normalize_out_idx((np.int64(1),), 3, "k") == [1]
    for bad, match in [([3], "out of range"), ([-4], "out of range"), ([1, -2], "twice"),
                       ([True], "not a param index"), (["a"], "not a param index")]:
        with pytest.raises(ValueError, match=match):
            normalize_out_idx(bad, 3, "k")


def test_cache_keys():
    assert cache_key({"M": 1}) != cache_key({"M": True})
    assert cache_key({"M": 1}) != cache_key({"M": 1.0})
    assert cache_key({"s": [1, 2]}) == cache_key({"s": [1, 2]})
    assert cache_key({"s": [1, 2]}) != cache_key({"s": (1, 2)})
    assert cache_key({"d": {}}) is None


def test_call_keys_tell_apart_what_compiles_apart():
    # A factory call's key, as given: plain values keyed with their types beside them.
    assert call_key((1,), {}) == call_key((1,), {})
    assert len({call_key((1,), {}), call_key((True,), {}), call_key((1.0,), {})}) == 3
    assert call_key((1,), {}) != call_key((), {"M": 1})
    assert call_key((1, 2), {}) != call_key((2, 1), {})
    assert call_key((), {"M": 1, "N": 2}) != call_key((), {"M": 2, "N": 1})
    # Nested values go through cache_key: its list and tuple tell apart, ints and floats within too.
    assert call_key(([1, 2],), {}) == call_key(([1, 2],), {})
    assert call_key(([1, 2],), {}) != call_key(((1, 2),), {})
    assert call_key(((1, 2),), {}) != call_key(((1.0, 2),), {})
    assert call_key((), {"d": {}}) is None


def test_pass_configs_as_text():
    assert core_pass_configs({"tl.disable_tma_lower": True, "n": 3}) == {
        "tl.disable_tma_lower": "true", "n": "3"}
    assert core_pass_configs(None) == {}


# ------------------------------------------------------------ fakes of the core


class FakeParam:
    def __init__(self, name, dtype="float32", shape=(2, 3)):
        self.name, self.dtype, self.shape, self.is_tensor = name, dtype, list(shape), True
        self.workspace = False

    def __repr__(self):
        return f"{self.name}: {self.dtype}"


class FakeCoreKernel:
    def __init__(self, params, out_idx=(), const_dims=()):
        self.name, self.target, self.arch = "fake", "cpu", ""
        self.params, self.out_idx, self.const_dims = params, list(out_idx), list(const_dims)
        self.source, self.ir, self.tile_ir, self.compile_seconds = "src", "ir", "tile", 0.5
        self.launches = []

    def output_shapes(self, args, outputs):
        return [tuple(self.params[i].shape) for i in outputs]

    def call(self, args, outputs):
        return NotImplemented  # as for arrays without DLPack's C exchange API: Kernel.run's path

    def launch(self, args, stream=0):
        assert all(arg is not None for arg in args)
        self.launches.append(list(args))


class FakeCore:
    """compile(), function_style() and cuda_available() of tilec._core,
    recording each compile."""

    def __init__(self, style, make_kernel, has_gpu=False):
        self.style, self.make_kernel, self.has_gpu, self.compiles = style, make_kernel, has_gpu, []

    def install(self, monkeypatch):
        monkeypatch.setattr(jit_module, "_core", self)

    def function_style(self, source, filename, first_line, name):
        return self.style

    def cuda_available(self):
        return self.has_gpu

    def compile(self, source, filename, first_line, name, bindings, target, arch, pass_configs,
                compile_flags):
        self.compiles.append(dict(source=source, first_line=first_line, name=name,
                                  bindings=bindings, target=target, arch=arch,
                                  pass_configs=pass_configs, compile_flags=compile_flags))
        return self.make_kernel(bindings)


def test_kernel_runs_in_place_or_allocates_outputs():
    core = FakeCoreKernel([FakeParam("A"), FakeParam("B"), FakeParam("C", "bfloat16")])
    kernel = Kernel(core, out_idx=[-1])
    assert kernel.out_idx == [2] and kernel.get_source() == "src" and kernel.get_tile_ir() == "tile"
    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    c = kernel(a, b)
    assert c.shape == (2, 3) and c.dtype == ml_dtypes.bfloat16
    launched = core.launches[-1]
    assert launched[0] is a and launched[2][1] == "bfloat16" and np.shares_memory(launched[2][0], c)
    assert kernel(a, b, c) is None
    with pytest.raises(ValueError, match=r"fake takes 3 arguments \(A, B, C\), or 2 without "
                                         r"its outputs \(A, B\); got 1"):
        kernel(a)


def test_out_idx_names_tensors_only():
    scale = FakeParam("scale")
    scale.is_tensor = False
    with pytest.raises(ValueError, match=r"out_idx of fake: param 1 \('scale'\) is a scalar; only "
                                         "tensors are allocated as outputs"):
        Kernel(FakeCoreKernel([FakeParam("A"), scale]), out_idx=[-1])


def test_kernel_takes_the_cores_out_idx_when_jit_gives_none():
    core = FakeCoreKernel([FakeParam("A"), FakeParam("B"), FakeParam("C")], out_idx=[1, 2])
    kernel = Kernel(core)
    b, c = kernel(np.ones((2, 3), np.float32))
    assert b.dtype == np.float32 and c.shape == (2, 3)


def test_factory_compiles_its_prim_func_once_per_arguments(monkeypatch):
    core = FakeCore("factory", lambda bindings: FakeCoreKernel([FakeParam("A"), FakeParam("B")]))
    core.install(monkeypatch)

    @tilec.jit(out_idx=[-1], target="cpu", pass_configs={"opt": False})
    def copy_kernel(M, N=4):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            T.copy(A, B)

        return main

    kernel = copy_kernel(2)
    assert copy_kernel(2, 4) is kernel and copy_kernel(M=2) is kernel
    assert len(core.compiles) == 1
    compiled = core.compiles[0]
    assert compiled["name"] == "main" and compiled["source"].startswith("        @T.prim_func")
    assert compiled["bindings"]["M"] == ("int", 2) and compiled["bindings"]["N"] == ("int", 4)
    assert compiled["target"] == "cpu" and compiled["arch"] == ""
    assert compiled["pass_configs"] == {"opt": "false"}
    assert kernel.out_idx == [1]
    copy_kernel(3)
    assert len(core.compiles) == 2
    copy_kernel(True)  # equal to 1 but another type: compiled apart
    assert len(core.compiles) == 3 and copy_kernel(1) is not copy_kernel(True)


@pytest.mark.parametrize("target,has_gpu,core_target,core_arch", [
    ("cuda", False, "cuda", "sm_80"),  # an explicit arch needs no GPU
    ("auto", True, "cuda", "sm_80"),
    ("auto", False, "cpu", ""),  # auto picked the CPU: the arch means nothing there
    ("cpu", False, "cpu", "sm_80"),  # given to the core, which refuses it
])
def test_arch_goes_to_the_core_with_the_resolved_target(monkeypatch, target, has_gpu,
                                                         core_target, core_arch):
    core = FakeCore("factory", lambda bindings: FakeCoreKernel([FakeParam("A")]), has_gpu)
    core.install(monkeypatch)

    @tilec.jit(target=target, arch="sm_80")
    def fill(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32")):
            T.clear(A)

        return main

    fill(8)
    assert (core.compiles[0]["target"], core.compiles[0]["arch"]) == (core_target, core_arch)


def test_compile_takes_a_prim_func(monkeypatch):
    core = FakeCore("prim_func", lambda bindings: FakeCoreKernel([FakeParam("A")]))
    core.install(monkeypatch)

    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        T.clear(A)

    kernel = tilec.compile(main, out_idx=[0], target="cuda", arch="sm_90a")
    assert isinstance(kernel, Kernel) and kernel.out_idx == [0]
    assert (core.compiles[0]["target"], core.compiles[0]["arch"]) == ("cuda", "sm_90a")
    with pytest.raises(TypeError, match="takes a @T.prim_func"):
        tilec.compile(lambda: None)


@pytest.mark.parametrize("not_a_function", [T.Tensor((8,), "float32"), 3, "main"])
def test_jit_of_something_other_than_a_function_is_a_type_error(not_a_function):
    # Found by tests/fuzz/jit_mutants.py: jit took a T.Tensor, then failed with AttributeError.
    with pytest.raises(TypeError, match=r"tilec.jit takes a function or a @T.prim_func, not a "):
        tilec.jit(not_a_function)
    with pytest.raises(TypeError, match=r"tilec.jit takes a function or a @T.prim_func, not a "):
        tilec.jit(target="cpu")(not_a_function)


def test_factory_returning_none_compiles_the_one_prim_func_it_defined(monkeypatch):
    core = FakeCore("factory", lambda bindings: FakeCoreKernel([FakeParam("q")]))
    core.install(monkeypatch)

    @tilec.jit
    def one(h: int):
        n = T.symbolic("n")

        @T.prim_func
        def kernel_func(q: T.Tensor[(n, h), "float16"]):
            T.clear(q)

    @tilec.jit
    def none(h: int):
        return None

    @tilec.jit
    def two(h: int):
        @T.prim_func
        def a(q: T.Tensor[(h,), "float16"]):
            T.clear(q)

        @T.prim_func
        def b(q: T.Tensor[(h,), "float16"]):
            T.clear(q)

    one(16)
    assert core.compiles[0]["bindings"]["n"] == ("symbolic", ("n", "int32"))
    assert core.compiles[0]["target"] == "cpu"
    with pytest.raises(ValueError, match="none returned None and defined 0"):
        none(16)
    with pytest.raises(ValueError, match="two returned None and defined 2"):
        two(16)


def test_eager_call_binds_tensors_by_name_and_reuses_fitting_kernels(monkeypatch):
    def make_kernel(bindings):
        shape, dtype = bindings["X"][1]
        return FakeCoreKernel([FakeParam("X", dtype, shape), FakeParam("Y", dtype, shape)],
                              out_idx=[1], const_dims=[(0, 0, shape[0])])

    core = FakeCore("eager", make_kernel)
    core.install(monkeypatch)

    @tilec.jit
    def scale(X, factor=2.0):
        Y = T.empty(X.shape, X.dtype)  # noqa: F841 - the core reads this, Python never runs it

    x = np.ones((4, 3), np.float32)
    y = scale(x)
    assert y.shape == (4, 3) and y.dtype == np.float32
    bindings = core.compiles[0]["bindings"]
    assert bindings["X"] == ("tensor_spec", ([4, 3], "float32"))
    assert bindings["factor"] == ("float", 2.0) and bindings["T"] == ("module", "tilec.language")
    scale(np.zeros((4, 3), np.float32))
    assert len(core.compiles) == 1  # same constants, dtype and T.const dims
    scale(np.zeros((5, 3), np.float32))
    scale(np.zeros((4, 3), np.float16))
    scale(x, factor=3.0)
    assert len(core.compiles) == 4


def test_eager_call_without_tensors_returns_the_kernel(monkeypatch):
    core = FakeCore("eager", lambda bindings: FakeCoreKernel([FakeParam("A")]))
    core.install(monkeypatch)

    @tilec.jit
    def matmul_kernel(M, N, K):
        A = T.Tensor[(M, K), "float32"]  # noqa: F841

    kernel = matmul_kernel(64, 64, 64)
    assert isinstance(kernel, Kernel) and matmul_kernel(64, 64, 64) is kernel
    assert core.compiles[0]["bindings"]["K"] == ("int", 64)
    assert matmul_kernel.compile(M=64, N=64, K=64) is kernel
    assert matmul_kernel.get_source.__func__ is JitFunction.get_kernel_source


def test_eager_param_without_argument_is_named(monkeypatch):
    core = FakeCore("eager", lambda bindings: FakeCoreKernel([FakeParam("X"), FakeParam("W")]))
    core.install(monkeypatch)

    @tilec.jit
    def uses_w(X):
        pass

    with pytest.raises(ValueError, match="kernel parameter 'W' is neither"):
        uses_w(np.ones((2, 3), np.float32))
