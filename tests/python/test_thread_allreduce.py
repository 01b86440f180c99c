"""TVM's thread allreduce as TileLang's gemv examples write it: T.tvm_thread_allreduce in a
`with T.attr(T.comm_reducer(lambda x, y: ..., [identity]), "reduce_scope", ...)` block, each
thread's value combined over the threads that differ in the named thread indices, every thread
given its group's result. On the backend under test (the CPU unless TILEC_TEST_TARGET says),
and built for sm_90a."""

import re

import numpy as np
import pytest

import tilec.language as T
from tilec import CompileError

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401
from test_errors import compile_error
from test_hopper import emit
from test_import_source import kernel_with

HERE = __file__


def allreduce_gemv(n, k, block_n, reduce_threads, reduce_dim=1, combine="sum"):
    """C = B A, row r by block_n x reduce_threads threads: those of one row (one index along the
    other dim) take every reduce_threads-th element of K, then reduce over reduce_dim. combine
    "max": C[r] = max over k of A[k] B[r, k]."""
    threads = (block_n, reduce_threads) if reduce_dim == 1 else (reduce_threads, block_n)

    @T.prim_func
    def main(A: T.Tensor((k,), "float32"), B: T.Tensor((n, k), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block_n), threads=threads) as bn:
            tn = T.get_thread_binding(1 - reduce_dim)
            tk = T.get_thread_binding(reduce_dim)
            partial = T.alloc_local((1,), "float32")
            reduced = T.alloc_local((1,), "float32")
            partial[0] = 0 if combine == "sum" else -T.infinity("float32")
            for bk in T.serial(T.ceildiv(k, reduce_threads)):
                if combine == "sum":
                    partial[0] += A[bk * reduce_threads + tk] * B[bn * block_n + tn, bk * reduce_threads + tk]
                else:
                    partial[0] = T.max(partial[0], A[bk * reduce_threads + tk] * B[bn * block_n + tn,
                                                                                   bk * reduce_threads + tk])
            with T.attr(T.comm_reducer(lambda x, y: x + y if combine == "sum" else T.max(x, y),
                                       [T.cast(0 if combine == "sum" else -T.infinity("float32"), "float32")]),
                        "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), partial[0], True, reduced[0], tk, dtype="handle"))
            C[bn * block_n + tn] = reduced[0]

    return main


@pytest.mark.parametrize("block_n,reduce_threads,reduce_dim,combine", [
    (8, 4, 1, "sum"), (4, 32, 1, "sum"), (16, 8, 0, "sum"), (8, 8, 1, "max"), (2, 64, 0, "max")])
def test_each_rows_threads_get_its_sum(rng, block_n, reduce_threads, reduce_dim, combine):
    n, k = 32, 256
    A, B = rand((k,), "float32", rng), rand((n, k), "float32", rng)
    C = poison((n,), "float32")
    jit(allreduce_gemv)(n, k, block_n, reduce_threads, reduce_dim, combine)(A, B, C)
    products = B.astype(np.float64) * A.astype(np.float64)
    if combine == "sum":
        assert_close(C, products.sum(axis=1), "float32", scale=np.sqrt(k))
    else:
        np.testing.assert_allclose(C, products.max(axis=1), rtol=1e-6)


def test_it_builds_for_sm_90a():
    # each thread's value into shared memory, the block's barrier, then its row's 4 combined
    source = emit(allreduce_gemv(64, 256, 8, 4), "source")
    store = source.index("allreduce_values[tx] = partial[0];")
    barrier = source.index("tilec_cuda::sync_threads();", store)
    assert source.index("for (int32_t j = 0; j < 4; ++j)", barrier) > barrier


@jit
def allreduce_outside_attr():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            r = T.alloc_local((1,), "float32")
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], True, r[0], T.get_thread_binding(0)))  # ERR:no-attr
            X[0] = r[0]

    return main


@jit
def attr_of_another_key():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "pragma_unroll", 0):  # ERR:key
                X[0] = 1

    return main


@jit
def reduced_over_a_non_thread_index():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            r = T.alloc_local((1,), "float32")
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope", 0):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], True, r[0], bx))  # ERR:index
            X[0] = r[0]

    return main


@jit
def result_in_shared_memory():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_shared((1,), "float32")
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope", 0):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], True, s[0], T.get_thread_binding(0)))  # ERR:result
            X[0] = s[0]

    return main


def test_an_allreduce_outside_a_reduce_scope_is_refused():
    check_diagnostic(compile_error(allreduce_outside_attr), HERE, "ERR:no-attr", "T.attr(T.comm_reducer(")


def test_another_attr_key_is_refused():
    check_diagnostic(compile_error(attr_of_another_key), HERE, "ERR:key", "\"reduce_scope\"", "str 'pragma_unroll'")


def test_a_reduction_over_what_is_not_a_thread_index_is_refused():
    check_diagnostic(compile_error(reduced_over_a_non_thread_index), HERE, "ERR:index", "reduces over thread indices")


def test_a_result_outside_the_threads_own_memory_is_refused():
    check_diagnostic(compile_error(result_in_shared_memory), HERE, "ERR:result", "T.alloc_local")


REDUCER = "T.comm_reducer(lambda x, y: x + y, [T.cast(0, 'float32')])"
ALLREDUCE = "T.tvm_thread_allreduce(T.uint32(1), X[0], True, r[0], T.get_thread_binding(0))"


@pytest.mark.parametrize("lines,message", [
    ([f"with T.attr({REDUCER}, 'reduce_scope'):", "    X[0] = 1"], "T.attr takes a node, a key and a value"),
    (["with T.attr(1, 'reduce_scope', 0):", "    X[0] = 1"], "takes a T.comm_reducer(lambda x, y: ..., [identity])"),
    (["with T.attr(T.comm_reducer(1, [0.0]), 'reduce_scope', 0):", "    X[0] = 1"],
     "T.comm_reducer's first argument is a lambda of two values"),
    (["with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0, 1.0]), 'reduce_scope', 0):", "    X[0] = 1"],
     "a list of one identity"),
    ([f"T.attr({REDUCER}, 'reduce_scope', 0)"], "T.attr is a with statement's"),
    ([f"c = {REDUCER}"], "T.comm_reducer names a reducer as T.attr's node"),
    (["r = T.alloc_local((1,), 'float32')", f"with T.attr({REDUCER}, 'reduce_scope', 0):",
      "    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), X[0], True, r[0], T.get_thread_binding(0)))"],
     "reduces one value at a time: its first argument is 1"),
    (["r = T.alloc_local((1,), 'float32')", f"with T.attr({REDUCER}, 'reduce_scope', 0):",
      "    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], X[1] > 0, r[0], T.get_thread_binding(0)))"],
     "T.tvm_thread_allreduce's condition is True"),
    (["r = T.alloc_local((1,), 'float32')", f"with T.attr({REDUCER}, 'reduce_scope', 0):",
      "    if X[1] > 0:", f"        T.evaluate({ALLREDUCE})"],
     "goes where every thread of the block reaches it"),
    (["r = T.alloc_local((1,), 'float32')", f"with T.attr({REDUCER}, 'reduce_scope', 0):",
      "    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], True, r[0], T.get_thread_binding(0), "
      "dtype='float32'))"],
     "takes dtype=\"handle\" alone as a keyword"),
    (["r = T.alloc_local((1,), 'float32')", f"with T.attr({REDUCER}, 'reduce_scope', 0):",
      "    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), X[0], True, r[0], T.get_thread_binding(0), "
      "T.get_thread_binding(0)))"],
     "this thread index is named twice"),
    (["T.evaluate(X)"], "T.evaluate takes a call's value"),
    (["r = T.alloc_reducer(32, 'float32', replication='some')"],
     "T.alloc_reducer's replication is \"all\" or \"none\", not str 'some'"),
    (["r = T.alloc_reducer(32, 'float32', replication='all')", "f = T.alloc_fragment(32, 'float32')",
      "T.finalize_reducer(r, f)"],
     "T.finalize_reducer(acc, dst) is TileLang's v2 reducer"),
])
def test_mistakes_are_errors_at_their_line(lines, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(kernel_with(lines, tmp_path), "ir")
