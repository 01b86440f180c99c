"""TileLang's v1 reducer, as its gemv example writes it: T.alloc_reducer(shape, dtype, op,
replication=...), cleared, added into in a T.Parallel loop over more dims than its own, then
T.finalize_reducer(reducer). On the backend under test, and built for sm_90a, where each thread
that holds an element runs every iteration writing it."""

import numpy as np
import pytest

import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401
from test_errors import compile_error
from test_hopper import emit

HERE = __file__


def reducer_gemv(m, n, block_m=128, block_n=128, threads=256, op="sum"):
    """o = a x (op "sum"), or o[i] = max over j of a[i, j] x[j] (op "max"), block_m rows a block."""

    @T.prim_func
    def main(a: T.Tensor((m, n), "float16"), x: T.Tensor((n,), "float16"), o: T.Tensor((m,), "float32")):
        with T.Kernel(T.ceildiv(m, block_m), threads=threads) as bm:
            o_reducer = T.alloc_reducer(block_m, "float32", op=op, replication="all")
            if op == "sum":
                T.clear(o_reducer)
            else:
                T.fill(o_reducer, -T.infinity("float32"))
            for bn in T.Pipelined(T.ceildiv(n, block_n), num_stages=2):
                a_smem = T.alloc_shared((block_m, block_n), "float16")
                T.copy(a[bm * block_m, bn * block_n], a_smem)
                a_frag = T.alloc_fragment((block_m, block_n), "float16")
                T.copy(a_smem, a_frag)
                x_frag = T.alloc_fragment(block_n, "float16")
                T.copy(x[bn * block_n], x_frag)
                for i, j in T.Parallel(block_m, block_n):
                    if op == "sum":
                        o_reducer[i] += a_frag[i, j] * x_frag[j]
                    else:
                        o_reducer[i] = T.max(o_reducer[i], a_frag[i, j] * x_frag[j])
            T.finalize_reducer(o_reducer)
            T.copy(o_reducer, o[bm * block_m])

    return main


@pytest.mark.parametrize("m,n,op", [(256, 512, "sum"), (128, 384, "max")])
def test_each_row_reduced_whole(rng, m, n, op):
    a, x = rand((m, n), "float16", rng), rand((n,), "float16", rng)
    o = poison((m,), "float32")
    jit(reducer_gemv)(m, n, op=op)(a, x, o)
    # each product rounds to float16 first, as TileLang's a_frag * x_frag does
    products = (a.astype(np.float32) * x.astype(np.float32)).astype(np.float16).astype(np.float64)
    if op == "sum":
        assert_close(o, products.sum(axis=1), "float32", scale=np.sqrt(n))
    else:
        np.testing.assert_array_equal(o, products.max(axis=1).astype(np.float32))


def test_each_thread_runs_its_rows_whole_on_cuda():
    source = emit(reducer_gemv(256, 512), "source")
    assert "for (int32_t s = 0; s < 128; ++s)" in source
    assert "o_reducer[0] = o_reducer[0] + " in source


@jit
def v2_reducer():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            r = T.alloc_reducer(32, "float32", op="sum")  # ERR:v2
            T.copy(r, X)

    return main


@jit
def finalize_of_a_fragment():
    @T.prim_func
    def main(X: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment(32, "float32")
            T.clear(f)
            T.finalize_reducer(f)  # ERR:not-reducer
            T.copy(f, X)

    return main


@jit
def bitwise_reducer():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            r = T.alloc_reducer(32, "int32", op="bitor", replication="all")  # ERR:op
            T.copy(r, X)

    return main


def test_the_v2_reducer_is_refused_naming_the_v1_form():
    check_diagnostic(compile_error(v2_reducer), HERE, "ERR:v2", "v2 reducer", "replication=\"all\"")


def test_finalizing_what_is_no_reducer_is_refused():
    check_diagnostic(compile_error(finalize_of_a_fragment), HERE, "ERR:not-reducer", "T.alloc_reducer's")


def test_a_v1_reducer_combines_by_sum_max_or_min():
    check_diagnostic(compile_error(bitwise_reducer), HERE, "ERR:op", "\"sum\", \"max\" or \"min\"", "bitor")
