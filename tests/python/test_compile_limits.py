"""Hostile kernels through the Python face: what crashed, hung or ended in an
internal compiler error is a located tilec.CompileError (the C++ tests cover
each limit; these cover the ways only Python reaches)."""

import threading

import pytest

import tilec
import tilec.language as T

from helpers import check_diagnostic, jit

HERE = __file__


@jit
def symbolic_factory_argument(n):
    @T.prim_func
    def main(A: T.Tensor((8,), "int64")):
        with T.Kernel(1) as bx:
            A[0] = n  # ERR:symbolic-without-tensor

    return main


def test_a_symbolic_dim_no_tensor_shape_uses():
    # Was "internal compiler error in pass verify" with an IR dump and no location.
    with pytest.raises(tilec.CompileError) as info:
        symbolic_factory_argument(T.symbolic("n"))
    check_diagnostic(str(info.value), HERE, "ERR:symbolic-without-tensor", "'n' has no value here",
                     "no tensor parameter's shape uses it")


@jit
def deep_expression(levels):
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1) as bx:
            t = (A[1],)
            for _ in (0,) * levels:
                t = (t[0] * A[2],)  # ERR:deep-expression
            A[0] = t[0]

    return main


def compile_on_thread(stack_bytes, compile):
    """Runs `compile` on a thread with a stack of `stack_bytes` (0: the default);
    returns the CompileError it raised, or None."""
    outcome = {}

    def run():
        try:
            compile()
        except tilec.CompileError as e:
            outcome["error"] = e

    saved = threading.stack_size(stack_bytes)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(saved)
    return outcome.get("error")


def test_deep_programs_compile_on_a_default_thread():
    assert compile_on_thread(0, lambda: deep_expression(1990)) is None


def test_a_thread_with_too_small_a_stack_gets_an_error_not_a_crash():
    error = compile_on_thread(256 << 10, lambda: deep_expression(1991))
    assert error is not None
    check_diagnostic(str(error), HERE, "ERR:deep-expression", "nests too deeply for the stack of the thread")


def test_an_expression_past_the_depth_limit():
    with pytest.raises(tilec.CompileError) as info:
        deep_expression(2500)
    check_diagnostic(str(info.value), HERE, "ERR:deep-expression", "too large to compile", "2000")



def nested_binding(depth):
    value = ("int", 1)
    for _ in range(depth):
        value = ("tuple", [value])
    return value


def emit_with_binding(value):
    source = ("import tilec.language as T\n@T.prim_func\ndef main(A: T.Tensor((4,), 'float32')):\n"
              "    with T.Kernel(1) as bx:\n        A[0] = 1.0\n")
    bindings = {"T": ("module", "tilec.language"), "deep": value}
    return tilec._core.emit(source, "k.py", 1, "main", bindings, "cpu", "", {}, "source")


def test_a_binding_nested_past_the_limit_is_refused_before_it_reaches_the_compiler():
    # capture.py stops at Python's recursion limit; a caller of the core that doesn't gets a
    # ValueError, not a C++ stack overflow.
    with pytest.raises(ValueError, match="nests more than 1000 tuples, lists or functions deep"):
        emit_with_binding(nested_binding(5000))
    assert "A[0]" in emit_with_binding(nested_binding(900))
