"""Kernels written thread by thread, on the backend under test: T.alloc_var, the thread and
block indices and extents (T.get_thread_binding, ...), and T.sync_threads. On the CPU a
block's statements that read a thread's own values run once for each thread
(passes/thread_loops.h); on a GPU each thread runs them."""

import numpy as np
import pytest

import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401
from test_errors import compile_error

HERE = __file__


# --- a GEMV whose threads are (row, slice of K), as TileLang's example_gemv writes it ---------

@jit
def gemv_by_threads(n, k, block_n, block_k, tvm_style=False):
    # tvm_style: the thread indices as TVMScript's T.thread_binding gives them
    @T.prim_func
    def main(A: T.Tensor((k,), "float32"), B: T.Tensor((n, k), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block_n), threads=(block_n, block_k)) as bn:
            if tvm_style:
                tn = T.thread_binding(0, block_n, thread="threadIdx.x")
                tk = T.thread_binding(0, block_k, thread="threadIdx.y")
            else:
                tn = T.get_thread_binding(0)
                tk = T.get_thread_binding(1)
            acc = T.alloc_local((1,), "float32")
            row_sums = T.alloc_shared((block_n,), "float32")
            if tk == 0:
                row_sums[tn] = 0
            T.clear(acc)
            for bk in T.serial(T.ceildiv(k, block_k)):
                acc[0] += A[bk * block_k + tk] * B[bn * block_n + tn, bk * block_k + tk]
            T.atomic_add(row_sums[tn], acc[0])
            C[bn * block_n + tn] = row_sums[tn]

    return main


@pytest.mark.parametrize("block_n,block_k,tvm_style", [(16, 8, False), (32, 4, False), (4, 32, False),
                                                     (16, 8, True)])
def test_gemv_written_thread_by_thread(rng, block_n, block_k, tvm_style):
    n, k = 64, 256
    A, B = rand((k,), "float32", rng), rand((n, k), "float32", rng)
    C = poison((n,), "float32")
    gemv_by_threads(n, k, block_n, block_k, tvm_style)(A, B, C)
    assert_close(C, B.astype(np.float64) @ A.astype(np.float64), "float32", scale=np.sqrt(k))


# --- threads hand values to each other through shared memory, with and without a barrier ------

@jit
def rotate_through_shared(n, explicit_barrier):
    @T.prim_func
    def main(X: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((n,), "int32")
            s[tx] = X[tx] * 2
            if explicit_barrier:
                T.sync_threads()
            Y[tx] = s[(tx + 1) % n] + tx

    return main


@pytest.mark.parametrize("explicit_barrier", [True, False])
def test_threads_read_each_others_shared_values(rng, explicit_barrier):
    n = 128
    X = rand((n,), "int32", rng)
    Y = poison((n,), "int32")
    rotate_through_shared(n, explicit_barrier)(X, Y)
    np.testing.assert_array_equal(Y, np.roll(X, -1) * 2 + np.arange(n))


# A loop the threads take together, each pass handing values on through shared memory: the
# CPU splits it at its statements; a GPU places a barrier each way.
@jit
def prefix_doubling(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "int32"), Y: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_shared((n,), "int32")
            v = T.alloc_var("int32")
            s[tx] = X[tx]
            step = 1
            for _ in T.serial(7):
                v = s[tx]
                if tx >= step:
                    v = v + s[tx - step]
                T.sync_threads()
                s[tx] = v
                T.sync_threads()
                step *= 2
            Y[tx] = s[tx]

    return main


def test_a_scan_whose_loop_every_thread_takes(rng):
    n = 128
    X = rand((n,), "int32", rng)
    Y = poison((n,), "int32")
    prefix_doubling(n)(X, Y)
    np.testing.assert_array_equal(Y, np.cumsum(X))


# --- T.alloc_var: its forms, its declared dtype, its init ----------------------------------

@jit
def variable_forms(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((4, n), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            a = T.alloc_var("int32")
            b = T.alloc_var(T.int32, 7)
            c = T.alloc_var("float32", "local.var")
            d = T.alloc_var(T.float32, init=X[tx] * 2)
            a = X[tx]          # converted to the declared int32 (truncation), as a store would
            b[0] = b[0] + tx
            c = a + 0.5
            alias = d
            alias = alias + 1  # the same variable under another name
            Y[0, tx] = a
            Y[1, tx] = b
            Y[2, tx] = c
            Y[3, tx] = d

    return main


def test_alloc_var_forms_and_conversion(rng):
    n = 64
    X = rand((n,), "float32", rng, low=-20, high=20)
    Y = poison((4, n), "float32")
    variable_forms(n)(X, Y)
    truncated = np.trunc(X)
    np.testing.assert_array_equal(Y[0], truncated)
    np.testing.assert_array_equal(Y[1], 7 + np.arange(n))
    np.testing.assert_array_equal(Y[2], truncated + 0.5)
    assert_close(Y[3], X.astype(np.float64) * 2 + 1, "float32")


@jit
def cleared_and_filled_variables(n):
    # TileLang's split-K reductions start their running sums with T.clear / T.fill of a variable.
    @T.prim_func
    def main(X: T.Tensor((n, 4), "float32"), Y: T.Tensor((2, n), "float32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            total = T.alloc_var("float32")
            largest = T.alloc_var("float32")
            T.clear(total)
            T.fill(largest, -T.infinity("float32"))
            for k in T.serial(4):
                total = total + X[tx, k]
                largest = T.max(largest, X[tx, k])
            Y[0, tx] = total
            Y[1, tx] = largest

    return main


def test_clear_and_fill_a_variable(rng):
    n = 32
    X = rand((n, 4), "float32", rng)
    Y = poison((2, n), "float32")
    cleared_and_filled_variables(n)(X, Y)
    assert_close(Y[0], X.astype(np.float64).sum(axis=1), "float32")
    assert_close(Y[1], X.max(axis=1), "float32")


# --- the extents and block bindings --------------------------------------------------------

@jit
def extents_and_bindings():
    @T.prim_func
    def main(Y: T.Tensor((3, 4, 8), "int32")):
        with T.Kernel(3, 4, threads=(8, 4, 2)) as (bx, by):
            tx, ty, tz = T.get_thread_bindings()
            ex, ey, ez = T.get_thread_extents()
            if ty == 0 and tz == 0:
                Y[bx, by, tx] = (T.get_block_binding(0) * 1000 + T.get_block_binding(1) * 100
                                 + ex * ey * ez + T.get_block_extent(0) * 10 + T.get_block_extent(2)
                                 + T.get_thread_extent(1) * 10000)

    return main


def test_thread_and_block_extents_and_bindings():
    Y = poison((3, 4, 8), "int32")
    extents_and_bindings()(Y)
    bx, by = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    expected = bx * 1000 + by * 100 + 64 + 30 + 1 + 40000
    np.testing.assert_array_equal(Y, np.broadcast_to(expected[:, :, None], (3, 4, 8)))


# --- errors --------------------------------------------------------------------------------

@jit
def alloc_var_outside_kernel():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        v = T.alloc_var("int32")  # ERR:alloc-var-outside
        with T.Kernel(1, threads=32) as bx:
            X[0] = v

    return main


@jit
def alloc_var_bad_scope():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            v = T.alloc_var("int32", scope="shared")  # ERR:alloc-var-scope
            X[0] = v

    return main


@jit
def named_barrier():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            T.sync_threads(barrier_id=1, arrive_count=16)  # ERR:named-barrier
            X[0] = 1

    return main


@jit
def thread_dim_out_of_range():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            X[0] = T.get_thread_binding(3)  # ERR:thread-dim

    return main


def test_alloc_var_outside_a_kernel():
    check_diagnostic(compile_error(alloc_var_outside_kernel), HERE, "ERR:alloc-var-outside", "T.Kernel")


def test_alloc_var_scope_is_local_var():
    check_diagnostic(compile_error(alloc_var_bad_scope), HERE, "ERR:alloc-var-scope", "local.var", "shared")


def test_a_named_barrier_of_other_threads_than_those_it_is_among_is_refused():
    check_diagnostic(compile_error(named_barrier), HERE, "ERR:named-barrier", "arrive_count=16",
                     "waits for the 32 threads of the block", "if tx < n:")


def test_thread_dim_out_of_range():
    check_diagnostic(compile_error(thread_dim_out_of_range), HERE, "ERR:thread-dim", "0, 1 or 2")


@jit
def barrier_under_thread_condition():
    @T.prim_func
    def main(X: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            if tx < 16:
                X[tx] = 1
                T.sync_threads()  # ERR:divergent-barrier

    return main




def test_a_barrier_only_some_threads_reach_is_an_error():
    text = compile_error(barrier_under_thread_condition)
    check_diagnostic(text, HERE, "ERR:divergent-barrier", "sync_threads", "every thread")


# --- T.atomic_add(..., return_prev=True): each thread takes a slot ---------------------------

@jit
def compact_positives(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "int32"), Out: T.Tensor((n,), "int32"), Count: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=n) as bx:
            tx = T.get_thread_binding()
            count = T.alloc_shared((1,), "int32")
            if tx == 0:
                count[0] = 0
            if X[tx] > 0:
                slot = T.atomic_add(count[0], 1, return_prev=True, memory_order="relaxed")
                Out[slot] = X[tx]
            if tx == 0:
                Count[0] = count[0]

    return main


def test_return_prev_gives_each_thread_its_own_slot(rng):
    n = 128
    X = rand((n,), "int32", rng)
    Out, Count = poison((n,), "int32"), poison((1,), "int32")
    compact_positives(n)(X, Out, Count)
    positives = np.sort(X[X > 0])
    assert Count[0] == len(positives)
    np.testing.assert_array_equal(np.sort(Out[:len(positives)]), positives)


@jit
def return_prev_in_block_statements():
    @T.prim_func
    def main(C: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            C[1] = T.atomic_add(C[0], 1, return_prev=True)  # ERR:block-return-prev

    return main


@jit
def stronger_memory_order():
    @T.prim_func
    def main(C: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(2):
                T.atomic_add(C[i], 1, memory_order="seq_cst")  # ERR:memory-order

    return main


def test_return_prev_in_the_blocks_own_statements_is_an_error():
    check_diagnostic(compile_error(return_prev_in_block_statements), HERE, "ERR:block-return-prev",
                     "return_prev", "get_thread_binding")


def test_memory_orders_other_than_relaxed_are_refused():
    check_diagnostic(compile_error(stronger_memory_order), HERE, "ERR:memory-order", "relaxed", "seq_cst")


@jit
def return_prev_in_parallel(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "int32"), Before: T.Tensor((n,), "int32"), Total: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                Before[i] = T.atomic_add(Total[0], X[i], return_prev=True)  # ERR:parallel-return-prev

    return main


def test_return_prev_in_a_parallel_loop_is_an_error():
    check_diagnostic(compile_error(return_prev_in_parallel, 256), HERE, "ERR:parallel-return-prev",
                     "return_prev", "T.Parallel")
