"""Compile errors (tilec.CompileError: `file:line:col: error: ...`, the source
line and a caret) and call-time argument errors (ValueError naming the
parameter).

Each faulty line carries a marker comment `# ERR:<name>`; the expected line
number is the marker's line in this file.
"""

import importlib.util
import linecache
import re
import sys

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import check_diagnostic, jit, parse_diagnostic, poison, rand, rng  # noqa: F401

HERE = __file__


def compile_error(factory, *args, **kwargs):
    with pytest.raises(tilec.CompileError) as info:
        factory(*args, **kwargs)
    return str(info.value)


def assert_mentions_any(text, words):
    message = parse_diagnostic(text)["message"].lower()
    assert any(w in message for w in words), f"none of {words} in the message:\n{text}"


# --- names ---------------------------------------------------------------------

@jit
def unknown_t_name():
    @T.prim_func
    def main(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copyy(A, B)  # ERR:unknown-t-name

    return main


def test_unknown_t_name():
    check_diagnostic(compile_error(unknown_t_name), HERE, "ERR:unknown-t-name", "copyy")


def test_caret_layout():
    text = compile_error(unknown_t_name)
    d = check_diagnostic(text, HERE, "ERR:unknown-t-name", "copyy")
    lines = text.split("\n")
    first = next(i for i, l in enumerate(lines) if re.search(r":\d+:\d+: error: ", l))
    source, caret = lines[first + 1], lines[first + 2]
    # The source line as written, indented by four spaces; under it, a caret at
    # the reported column of that line.
    file_line = open(HERE, encoding="utf-8").read().split("\n")[d["line"] - 1]
    assert source.startswith("    ") and source.strip() == file_line.strip()
    assert caret.startswith("    ") and caret.strip() == "^"
    at_caret = d["source"][d["caret_col"] - 1:]
    assert at_caret.startswith("T.copyy") or at_caret.startswith("copyy"), text
    # The column is the file's column.
    indent_file = len(file_line) - len(file_line.lstrip())
    indent_quoted = len(d["source"]) - len(d["source"].lstrip())
    assert d["col"] == d["caret_col"] - indent_quoted + indent_file, text


@jit
def unknown_free_variable():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            B[0] = A[0] * undefined_scale_xyz  # noqa: F821  ERR:unknown-free-variable

    return main


def test_unknown_free_variable():
    check_diagnostic(compile_error(unknown_free_variable), HERE, "ERR:unknown-free-variable",
                     "undefined_scale_xyz")


@jit
def free_variable_dict():
    cfg = {"scale": 2.0}

    @T.prim_func
    def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            B[0] = A[0] * cfg["scale"]  # ERR:free-variable-dict

    return main


@jit
def free_variable_object():
    thing = object()

    @T.prim_func
    def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            B[0] = A[0] * thing  # ERR:free-variable-object

    return main


def test_free_variable_of_unusable_type_names_it_and_its_type():
    check_diagnostic(compile_error(free_variable_dict), HERE, "ERR:free-variable-dict",
                     "cfg", "dict")
    check_diagnostic(compile_error(free_variable_object), HERE, "ERR:free-variable-object",
                     "thing", "object")


# --- arguments of T primitives -------------------------------------------------

@jit
def gemm_missing_argument():
    @T.prim_func
    def main(A: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32, 32), "float32")
            B_s = T.alloc_shared((32, 32), "float32")
            T.copy(A, A_s)
            T.copy(A, B_s)
            T.gemm(A_s, B_s)  # ERR:gemm-missing-argument

    return main


def test_wrong_argument_count_of_a_primitive():
    text = compile_error(gemm_missing_argument)
    check_diagnostic(text, HERE, "ERR:gemm-missing-argument", "gemm")
    assert_mentions_any(text, ["argument", "expect", "missing"])


@jit
def copy_unknown_keyword():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B, foo=1)  # ERR:copy-unknown-keyword

    return main


def test_unknown_keyword():
    check_diagnostic(compile_error(copy_unknown_keyword), HERE, "ERR:copy-unknown-keyword", "foo")


@jit
def swizzle_misuse(case):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32")):
        if case == "outside":
            T.use_swizzle(2)  # ERR:swizzle-outside
        if case != "outside":
            with T.Kernel(2, 2, threads=128) as (bx, by):
                if case == "twice":
                    T.use_swizzle(2)
                    T.use_swizzle(4)  # ERR:swizzle-twice
                elif case == "order":
                    T.use_swizzle(2, order="diagonal")  # ERR:swizzle-order
                else:
                    T.use_swizzle(0)  # ERR:swizzle-panel
                A[bx, by] = 1.0

    return main


@pytest.mark.parametrize("case,marker,word", [("outside", "ERR:swizzle-outside", "inside a T.Kernel"),
                                              ("twice", "ERR:swizzle-twice", "twice"),
                                              ("order", "ERR:swizzle-order", "\"row\" or \"col\""),
                                              ("panel", "ERR:swizzle-panel", "at least 1")])
def test_use_swizzle_misuse(case, marker, word):
    check_diagnostic(compile_error(swizzle_misuse, case), HERE, marker, word)


# --- shapes and dims -----------------------------------------------------------

@jit
def copy_shape_mismatch():
    @T.prim_func
    def main(A: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32, 32), "float32")
            B_s = T.alloc_shared((32, 16), "float32")
            T.copy(A, A_s)
            T.copy(A_s, B_s)  # ERR:copy-shape-mismatch

    return main


def test_copy_shape_mismatch():
    check_diagnostic(compile_error(copy_shape_mismatch), HERE, "ERR:copy-shape-mismatch", "shape")


@jit
def gemm_k_mismatch():
    @T.prim_func
    def main(A: T.Tensor((32, 16), "float32"), B: T.Tensor((32, 32), "float32"),
             C: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32, 16), "float32")
            B_s = T.alloc_shared((32, 32), "float32")
            C_f = T.alloc_fragment((32, 32), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_f)
            T.gemm(A_s, B_s, C_f)  # ERR:gemm-k-mismatch
            T.copy(C_f, C)

    return main


def test_gemm_shape_mismatch():
    text = compile_error(gemm_k_mismatch)
    check_diagnostic(text, HERE, "ERR:gemm-k-mismatch")
    assert_mentions_any(text, ["shape", "dim", "extent", "mismatch", "disagree", "16"])


@jit
def reduce_dim_out_of_range():
    @T.prim_func
    def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((8, 8), "float32")
            B_f = T.alloc_fragment((8,), "float32")
            T.copy(A, A_f)
            T.reduce_sum(A_f, B_f, dim=2)  # ERR:reduce-dim
            T.copy(B_f, B)

    return main


def test_reduce_dim_out_of_range():
    check_diagnostic(compile_error(reduce_dim_out_of_range), HERE, "ERR:reduce-dim", "dim")


@jit
def reduce_of_some_rows():
    @T.prim_func
    def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_f = T.alloc_fragment((8, 8), "float32")
            B_f = T.alloc_fragment((4,), "float32")
            T.copy(A, A_f)
            T.reduce_sum(A_f[0:4, 2:6], B_f, dim=1)  # ERR:reduce-rows
            T.copy(B_f, B)

    return main


def test_a_fragment_reduced_over_some_of_its_rows_is_an_error_on_every_target():
    # its result is laid out as the source's whole rows; a range of the reduced dim (2:6) is fine
    check_diagnostic(compile_error(reduce_of_some_rows), HERE, "ERR:reduce-rows", "takes whole lines of 'A_f'",
                     "dim 0 is sliced")


@jit
def cumsum_fault(fault):
    @T.prim_func
    def main(A: T.Tensor((8, 16), "float32"), B: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((8, 16), "float32")
            B_f = T.alloc_fragment((8, 16), "float32")
            H_s = T.alloc_shared((8, 16), "float16")
            W_f = T.alloc_fragment((16, 8), "float32")
            T.copy(A, A_s)
            if fault == "dim":
                T.cumsum(A_s, B_f, dim=2)  # ERR:cumsum-dim
            elif fault == "negative-dim":
                T.cumsum(A_s, dim=-3)  # ERR:cumsum-negative-dim
            elif fault == "dtype":
                T.cumsum(A_s, H_s)  # ERR:cumsum-dtype
            elif fault == "shape":
                T.cumsum(A_s, W_f, dim=1)  # ERR:cumsum-shape
            elif fault == "global":
                T.cumsum(A, A_s)  # ERR:cumsum-global
            else:
                T.cumsum(A_s[0, 0], B_f)  # ERR:cumsum-point
            T.copy(B_f, B)

    return main


@pytest.mark.parametrize("fault,words,operand", [
    ("dim", ["dim 2", "out of range", "2-D", "A_s"], "dim=2"),
    ("negative-dim", ["dim -3", "out of range"], "dim=-3"),
    ("dtype", ["float16", "float32", "dtype"], "H_s"),
    ("shape", ["shapes differ", "(16, 8)", "(8, 16)"], "W_f"),
    ("global", ["global", "shared or fragment"], "A"),
    ("point", ["tiles", "single elements"], "A_s[0, 0]"),
])
def test_cumsum_errors_point_at_the_operand(fault, words, operand):
    d = check_diagnostic(compile_error(cumsum_fault, fault), HERE, f"ERR:cumsum-{fault}", *words)
    # The caret is at the operand (or dim) the error is about.
    assert d["source"][d["caret_col"] - 1:].startswith(operand), d["text"]


# --- dtypes --------------------------------------------------------------------

@jit
def unknown_dtype():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32,), "floatx")  # ERR:unknown-dtype
            T.copy(A, A_s)

    return main


def test_unknown_dtype():
    check_diagnostic(compile_error(unknown_dtype), HERE, "ERR:unknown-dtype", "floatx")


# --- unsupported Python --------------------------------------------------------

@jit
def uses_lambda():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            f = lambda x: x * 2  # noqa: E731  ERR:lambda
            A[0] = f(A[0])

    return main


@jit
def uses_set_comprehension():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            xs = {i * 2 for i in range(4)}  # ERR:set-comprehension
            A[0] = len(xs)

    return main


@jit
def uses_try():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            try:  # ERR:try
                A[0] = 1.0
            except Exception:
                A[0] = 2.0

    return main


@pytest.mark.parametrize("factory,marker,word", [
    (uses_lambda, "ERR:lambda", "lambda"),
    (uses_set_comprehension, "ERR:set-comprehension", "set comprehension"),
    (uses_try, "ERR:try", "try"),
])
def test_unsupported_python_construct(factory, marker, word):
    check_diagnostic(compile_error(factory), HERE, marker, word)


@jit
def assigns_loop_variable():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(4):
                i = 2  # ERR:assign-loop-variable
                A[i] = 1.0

    return main


def test_assignment_to_loop_variable():
    check_diagnostic(compile_error(assigns_loop_variable), HERE, "ERR:assign-loop-variable",
                     "loop")


# --- eager style reports the jit function's own lines ---------------------------

@jit
def eager_with_error(A, block: int = 16):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    B = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        A_s = T.alloc_shared((block,), "float32")
        T.copy(A[bx * block], A_s)
        T.copyy(A_s, B[bx * block])  # ERR:eager-unknown-t-name
    return B


def test_eager_error_location(rng):
    text = compile_error(eager_with_error, rand(32, "float32", rng))
    check_diagnostic(text, HERE, "ERR:eager-unknown-t-name", "copyy")


# --- syntax errors ---------------------------------------------------------------

SYNTAX_TEMPLATE = '''\
import tilec
import tilec.language as T


@tilec.jit(target="cpu")
def factory():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A[0] = {expr}  # ERR:syntax

    return main
'''


def test_syntax_error(tmp_path):
    # Python can't import a file with a syntax error, but the kernel compiler
    # reads the kernel's source text itself: import a valid version of the
    # file, then break the line in place (same line numbers).
    path = tmp_path / "kernel_with_syntax_error.py"
    path.write_text(SYNTAX_TEMPLATE.format(expr="1.0 + 2.0"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kernel_with_syntax_error", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        path.write_text(SYNTAX_TEMPLATE.format(expr="1.0 + * 2.0"), encoding="utf-8")
        linecache.checkcache(str(path))
        text = compile_error(module.factory)
    finally:
        del sys.modules[spec.name]
    d = check_diagnostic(text, str(path), "ERR:syntax")
    assert_mentions_any(text, ["syntax", "expected", "unexpected", "invalid"])
    # The caret points into the broken expression.
    assert d["source"].strip().startswith("A[0] = 1.0 + * 2.0")
    start = d["source"].index("1.0 + * 2.0")
    assert start <= d["caret_col"] - 1 < start + len("1.0 + * 2.0"), text


# --- call-time argument errors ---------------------------------------------------

def add(n):
    @T.prim_func
    def main(lhs_mat: T.Tensor((n, 4), "float32"), rhs_mat: T.Tensor((n, 4), "float32"),
             sum_mat: T.Tensor((n, 4), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(n, 4):
                sum_mat[i, j] = lhs_mat[i, j] + rhs_mat[i, j]

    return main


checked_add = jit(add)
# Built for the CPU: the checks on NumPy's read-only flags, foreign memory and alignment are
# the core's for every target, and torch tensors (how the GPU tests pass arrays) can't carry
# those states.
host_add = tilec.jit(add, target="cpu")


@pytest.fixture
def add_args(rng):
    return rand((8, 4), "float32", rng), rand((8, 4), "float32", rng), poison((8, 4), "float32")


def call_error(kernel, *args):
    with pytest.raises(ValueError) as info:
        kernel(*args)
    return str(info.value)


def names(msg, param):
    return re.search(rf"\b{param}\b", msg) is not None


def test_call_with_correct_arguments_runs(add_args):
    lhs, rhs, out = add_args
    checked_add(8)(lhs, rhs, out)
    np.testing.assert_array_equal(out, lhs + rhs)


def test_call_with_wrong_argument_count(add_args):
    lhs, rhs, out = add_args
    kernel = checked_add(8)
    msg = call_error(kernel, lhs, rhs)
    assert names(msg, "sum_mat") or "3" in msg, msg
    msg = call_error(kernel, lhs, rhs, out, out)
    assert "3" in msg or "4" in msg, msg


def test_call_with_wrong_dtype(add_args):
    lhs, rhs, out = add_args
    msg = call_error(checked_add(8), lhs.astype(np.float64), rhs, out)
    assert names(msg, "lhs_mat") and "float32" in msg, msg


def test_call_with_wrong_rank(add_args):
    lhs, rhs, out = add_args
    msg = call_error(checked_add(8), lhs, rhs.reshape(-1), out)
    assert names(msg, "rhs_mat"), msg


def test_shape_mismatch_against_a_constant_dim(add_args):
    lhs, rhs, out = add_args
    msg = call_error(checked_add(8), lhs, rhs, poison((8, 5), "float32"))
    assert names(msg, "sum_mat"), msg
    msg = call_error(checked_add(8), poison((9, 4), "float32"), rhs, out)
    assert names(msg, "lhs_mat"), msg


def test_non_array_argument_is_a_type_error(add_args):
    lhs, rhs, out = add_args
    for args, param in [((lhs, "not an array", out), "rhs_mat"), ((lhs, rhs, 3), "sum_mat"),
                        ((lhs, rhs, 2**70), "sum_mat"), ((lhs, None, out), "rhs_mat")]:
        with pytest.raises(TypeError) as info:
            checked_add(8)(*args)
        assert names(str(info.value), param), info.value
    assert np.isnan(out).all()


@jit(out_idx=[-1])
def add_rows():
    n = T.symbolic("n")

    @T.prim_func
    def main(lhs_rows: T.Tensor((n, 4), "float32"), rhs_rows: T.Tensor((n, 4), "float32"),
             sum_rows: T.Tensor((n, 4), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i, j in T.Parallel(n, 4):
                sum_rows[i, j] = lhs_rows[i, j] + rhs_rows[i, j]

    return main


def test_none_is_an_output_to_allocate_never_an_input(add_args):
    lhs, rhs, _ = add_args
    kernel = add_rows()
    for args, param in [((None, rhs), "lhs_rows"), ((lhs, None), "rhs_rows"),
                        ((lhs, None, None), "rhs_rows")]:
        with pytest.raises(TypeError, match=rf"\('{param}'\) of main is a NoneType"):
            kernel(*args)
    np.testing.assert_array_equal(kernel(lhs, rhs), lhs + rhs)


@jit
def fill_with(dtype_name):
    dtype = getattr(T, dtype_name)

    @T.prim_func
    def main(out: T.Tensor((4,), "float64"), value: dtype):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(4):
                out[i] = T.cast(value, "float64")

    return main


@pytest.mark.parametrize("dtype,value,message", [
    ("int32", 2**40, "argument 'value' is 1099511627776, outside int32's range "
                     r"\[-2147483648, 2147483647\]"),
    ("int32", 2**70, r"argument 1 \('value'\) of main is 1180591620717411303424, outside "
                     "int32's range"),
    ("uint8", -1, r"argument 'value' is -1, outside uint8's range \[0, 255\]"),
    ("int64", 2**63, "argument 'value' is 9223372036854775808, outside int64's range"),
    ("bool", 2, r"argument 'value' is 2, outside bool's range \[0, 1\]"),
    ("float16", 1e5, r"argument 'value' is 100000, outside float16's finite range \[-65504, 65504\]"),
    ("float64", 10**400, r"argument 1 \('value'\) of main is 1000000000.*, outside float64's range"),
])
def test_scalar_outside_its_dtypes_range(dtype, value, message):
    out = poison(4, "float64")
    with pytest.raises(ValueError, match=message):
        fill_with(dtype)(out, value)
    assert np.isnan(out).all()


@pytest.mark.parametrize("dtype,value", [("int32", 2.0), ("int8", np.float32(1)), ("bool", 0.0)])
def test_float_for_an_integer_param_is_a_type_error(dtype, value):
    with pytest.raises(TypeError, match="argument 'value' must be (an integer|a bool).*not a float"):
        fill_with(dtype)(poison(4, "float64"), value)


@pytest.mark.parametrize("dtype,value", [
    ("uint64", 2**64 - 1), ("int64", -2**63), ("int8", np.int8(-128)), ("int32", True),
    ("float32", 2**70), ("float16", -65504), ("float32", float("inf")), ("bool", np.bool_(True)),
])
def test_scalars_within_their_range_arrive(dtype, value):
    out = poison(4, "float64")
    fill_with(dtype)(out, value)
    expected = float(np.array(value).astype(dtype))
    assert (out == expected).all(), (out, expected)


def read_only_outputs(tmp_path):
    """(name, array) pairs of read-only (8, 4) float32 arrays, each a way NumPy makes them."""
    path = tmp_path / "zeros.bin"
    np.zeros((8, 4), np.float32).tofile(path)
    flagged = np.zeros((8, 4), np.float32)
    flagged.flags.writeable = False
    return [("memmap", np.memmap(path, dtype=np.float32, mode="r", shape=(8, 4))),
            ("frombuffer", np.frombuffer(bytes(128), dtype=np.float32).reshape(8, 4)),
            ("writeable=False", flagged),
            ("broadcast_to", np.broadcast_to(np.zeros(4, np.float32), (8, 4)))]


def test_a_read_only_output_is_refused(add_args, tmp_path):
    lhs, rhs, _ = add_args
    for how, out in read_only_outputs(tmp_path):
        msg = call_error(host_add(8), lhs, rhs, out)
        assert "argument 'sum_mat' is read-only, but kernel 'main' writes it" in msg, (how, msg)
        assert (out == 0).all(), how


def test_dlpack_capsules_carry_the_read_only_flag(add_args):
    # The way torch and CuPy tensors arrive (kernel.py exports them): a capsule, whose
    # DLPack 1.x form has the flag.
    if np.lib.NumpyVersion(np.__version__) < "2.1.0":
        pytest.skip("NumPy exports DLPack 1.x capsules from 2.1 on")
    lhs, rhs, out = add_args
    host_add(8)(lhs.__dlpack__(), rhs.__dlpack__(max_version=(1, 0)), out.__dlpack__())
    np.testing.assert_array_equal(out, lhs + rhs)
    read_only = np.zeros((8, 4), np.float32)
    read_only.flags.writeable = False
    msg = call_error(host_add(8), lhs, rhs, read_only.__dlpack__(max_version=(1, 0)))
    assert "argument 'sum_mat' is read-only" in msg, msg
    host_add(8)(read_only.__dlpack__(max_version=(1, 0)), rhs, out)
    np.testing.assert_array_equal(out, rhs)


def test_a_retyped_array_must_hold_the_bytes_its_view_covers(add_args):
    # (array, dtype name) reads the array's memory as that dtype: 32 uint8 bytes can't hold
    # a float32 (8, 4).
    lhs, rhs, _ = add_args
    small = np.zeros((8, 4), np.uint8)
    msg = call_error(host_add(8), lhs, rhs, (small, "float32"))
    assert ("argument 'sum_mat' (float32 of shape (8, 4) and strides (4, 1)) covers bytes "
            "[0, 128) of its data, past the [0, 32) its memory holds") in msg, msg
    assert (small == 0).all()
    same_width = np.zeros((8, 4), np.uint32)
    host_add(8)(lhs, rhs, (same_width, "float32"))
    np.testing.assert_array_equal(same_width.view(np.float32), lhs + rhs)


def test_a_retyped_array_is_a_pair_of_an_array_and_a_dtype_name(add_args):
    lhs, rhs, out = add_args
    for bad in [(out, 3), (out,), (out, "float32", 1)]:
        with pytest.raises(TypeError, match=r"argument 2 \('sum_mat'\) of main is a tuple: a "
                                            r"retyped tensor is a \(tensor, dtype_name\) pair"):
            checked_add(8)(lhs, rhs, bad)
    with pytest.raises(ValueError, match=r"\('sum_mat'\) of main is retyped to 'float33', which "
                                         "is no tilec element type"):
        checked_add(8)(lhs, rhs, (out, "float33"))
    assert np.isnan(out).all()


def test_data_off_its_element_alignment_is_refused(add_args):
    lhs, rhs, _ = add_args
    memory = bytearray(129)
    misaligned = np.frombuffer(memory, dtype=np.float32, offset=1).reshape(8, 4)
    msg = call_error(host_add(8), lhs, rhs, misaligned)
    assert ("argument 'sum_mat' has its data at an address that is not a multiple of its "
            "float32 elements' 4 bytes") in msg, msg
    assert memory == bytearray(129)


def test_read_only_inputs_are_read(add_args, tmp_path):
    _, rhs, out = add_args
    for how, lhs in read_only_outputs(tmp_path):
        out[:] = np.nan
        host_add(8)(lhs, rhs, out)
        np.testing.assert_array_equal(out, rhs, err_msg=how)


def test_rejected_call_writes_nothing(add_args):
    lhs, rhs, out = add_args
    call_error(checked_add(8), lhs, rhs.astype(np.float64), out)
    assert np.isnan(out).all()



def test_unknown_pass_config_names_it_and_the_known_ones():
    @T.prim_func
    def copy(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.Parallel(8):
                B[i] = A[i]

    with pytest.raises(ValueError) as info:
        tilec.compile(copy, target="cpu", pass_configs={"tilec.disable_tma_lower": True})
    assert "'tilec.disable_tma_lower'" in str(info.value) and "tilec.specialize_contiguous" in str(info.value)
    with pytest.raises(ValueError) as info:
        tilec.compile(copy, target="cpu", pass_configs={"tilec.bounds_check": "sometimes"})
    assert "'tilec.bounds_check'" in str(info.value) and "'sometimes'" in str(info.value)


@jit
def copy_unknown_instruction():
    @T.prim_func
    def main(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B, prefer_instruction="ldmatrix")  # ERR:copy-prefer

    return main


def test_copy_prefer_instruction_names_the_choices():
    check_diagnostic(compile_error(copy_unknown_instruction), HERE, "ERR:copy-prefer", "tma", "cp_async", "sync")
