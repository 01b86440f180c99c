"""Math functions, integer and float division, control flow and compile-time
evaluation (constant folding, constant `if`, tuple unpacking, `range` over
constants, T.macro) on the backend under test."""

import numpy as np
import pytest

import tilec
import tilec.language as T

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401  (rng is a fixture)
from test_errors import compile_error


# --- math functions ------------------------------------------------------------

@jit
def unary_math(n, dtype, block=32):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((9, n), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                idx = bx * block + i
                if idx < n:
                    x = A[idx]
                    y = B[idx]
                    C[0, idx] = T.exp(x)
                    C[1, idx] = T.exp2(x)
                    C[2, idx] = T.log(T.abs(x))
                    C[3, idx] = T.log2(T.abs(x))
                    C[4, idx] = T.sqrt(T.abs(x))
                    C[5, idx] = T.rsqrt(T.abs(x))
                    C[6, idx] = T.abs(x)
                    C[7, idx] = T.max(x, y)
                    C[8, idx] = T.min(x, y)

    return main


MATH_NAMES = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "max", "min"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("n", [32, 61])
def test_math_functions(dtype, n, rng):
    a, b = rand(n, dtype, rng), rand(n, dtype, rng)
    c = poison((9, n), dtype)
    unary_math(n, dtype)(a, b, c)
    x, y = a.astype(np.float64), b.astype(np.float64)
    expected = [np.exp(x), np.exp2(x), np.log(np.abs(x)), np.log2(np.abs(x)),
                np.sqrt(np.abs(x)), 1 / np.sqrt(np.abs(x)), np.abs(x), np.maximum(x, y),
                np.minimum(x, y)]
    for row, (name, e) in enumerate(zip(MATH_NAMES, expected)):
        assert_close(c[row], e, dtype, what=f"T.{name}")


# --- division and modulo -------------------------------------------------------

@jit
def int_div_mod(n, dtype):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((6, n), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[0, i] = A[i] // B[i]
                C[1, i] = A[i] % B[i]
                C[2, i] = A[i] // 4
                C[3, i] = A[i] % 4
                C[4, i] = A[i] // -3
                C[5, i] = A[i] % -3

    return main


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_floor_div_and_mod_with_negative_operands(dtype, rng):
    # Every sign combination, exact multiples and zero, then random values.
    a_fixed = [-7, 7, -7, 7, -6, 6, 0, -1, 1, -9, 9, -12]
    b_fixed = [2, 2, -2, -2, 3, -3, 5, 4, -4, 9, -9, 5]
    a = np.concatenate([a_fixed, rand(40, dtype, rng, low=-50, high=50)]).astype(dtype)
    b = np.concatenate([b_fixed, rand(40, dtype, rng, low=-9, high=9)]).astype(dtype)
    b[b == 0] = 7
    n = a.size
    c = poison((6, n), dtype)
    int_div_mod(n, dtype)(a, b, c)
    # NumPy's // and % on integers are Python's: floor division, result of % has
    # the divisor's sign.
    expected = [a // b, a % b, a // 4, a % 4, a // -3, a % -3]
    names = ["a // b", "a % b", "a // 4", "a % 4", "a // -3", "a % -3"]
    for row, (name, e) in enumerate(zip(names, expected)):
        assert_close(c[row], e, dtype, what=name)


@jit
def index_div_mod(n):
    @T.prim_func
    def main(C: T.Tensor((2, n), "int32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[0, i] = (i - 6) // 4
                C[1, i] = (i - 6) % 4

    return main


def test_floor_div_and_mod_of_loop_index_expressions():
    c = poison((2, 13), "int32")
    index_div_mod(13)(c)
    i = np.arange(13) - 6
    assert_close(c[0], i // 4, "int32")
    assert_close(c[1], i % 4, "int32")


@jit
def xor_of_ints(n, dtype):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((3, n), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[0, i] = A[i] ^ B[i]
                C[1, i] = A[i] ^ 5
                C[2, i] = A[i ^ 1] + (i ^ 3) * 2

    return main


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_xor_of_runtime_integers(dtype, rng):
    a = rand(16, dtype, rng, low=-50, high=50)
    b = rand(16, dtype, rng, low=-50, high=50)
    c = poison((3, 16), dtype)
    xor_of_ints(16, dtype)(a, b, c)
    i = np.arange(16)
    assert_close(c[0], a ^ b, dtype, what="a ^ b")
    assert_close(c[1], a ^ 5, dtype, what="a ^ 5")
    assert_close(c[2], a[i ^ 1] + (i ^ 3) * 2, dtype, what="A[i ^ 1] + (i ^ 3) * 2")


@jit
def bitwise_of_ints(n, dtype):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((6, n), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                C[0, i] = A[i] & B[i]
                C[1, i] = A[i] | 0x41
                C[2, i] = ~A[i]
                C[3, i] = A[i] >> 3
                C[4, i] = (A[i] & 0x3F) << 2
                C[5, i] = T.if_then_else(A[i] < B[i], ~A[i] & 0x7F, A[i] | (B[i] >> 1))

    return main


@pytest.mark.parametrize("dtype", ["int32", "uint16", "int8", "uint32", "int64"])
def test_bitwise_operators_of_runtime_integers(dtype, rng):
    signed = np.dtype(dtype).kind == "i"
    low, high = (-100, 100) if signed else (0, 200)
    a = rand(64, dtype, rng, low=low, high=high)
    b = rand(64, dtype, rng, low=low, high=high)
    c = poison((6, 64), dtype)
    bitwise_of_ints(64, dtype)(a, b, c)
    t = np.dtype(dtype).type
    assert_close(c[0], a & b, dtype, exact=True, what="a & b")
    assert_close(c[1], a | t(0x41), dtype, exact=True, what="a | 0x41")
    assert_close(c[2], ~a, dtype, exact=True, what="~a")
    assert_close(c[3], a >> t(3), dtype, exact=True, what="a >> 3 (arithmetic on signed types)")
    assert_close(c[4], ((a & t(0x3F)) << t(2)).astype(dtype), dtype, exact=True, what="(a & 0x3F) << 2")
    expected = np.where(a < b, ~a & t(0x7F), a | (b >> t(1))).astype(dtype)
    assert_close(c[5], expected, dtype, exact=True, what="select of bit operations")


def test_bitwise_operators_need_integers():
    @jit
    def float_and(n):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    A[i] = A[i] & 3  # ERR:bitwise-float

        return main

    check_diagnostic(compile_error(float_and, 32), __file__, "ERR:bitwise-float", "'&' needs integers")


@jit
def shadowed_loop_variable(n):
    # TileLang's NSA forward: an inner T.Parallel names its index i inside a loop over i; the
    # outer i is its own again after the inner loop (TVMScript's scoping).
    @T.prim_func
    def main(A: T.Tensor((4, n), "float32"), B: T.Tensor((4, n), "float32")):
        with T.Kernel(1, threads=32) as bx:
            row = T.alloc_fragment((n,), "float32")
            for i in T.serial(4):
                if i >= 0:
                    for i, j in T.Parallel(1, n):
                        row[j] = A[0, j] * 0 + i
                for j in T.Parallel(n):
                    B[i, j] = A[i, j] + row[j] * 100 + i

    return main


def test_an_inner_loop_shadows_the_loop_variable_of_its_loop(rng):
    a = rand((4, 32), "float32", rng)
    b = poison((4, 32), "float32")
    shadowed_loop_variable(32)(a, b)
    assert_close(b, a.astype(np.float64) + np.arange(4)[:, None], "float32")


Q_PY, R_PY = divmod(-17, 5)  # computed by Python: -4, 3


@jit
def folded_div_mod():
    q, r = Q_PY, R_PY

    @T.prim_func
    def main(C: T.Tensor((6,), "int32"), F: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            C[0] = -7 // 2
            C[1] = -7 % 3
            C[2] = 7 % -3
            C[3] = 7 // -2
            C[4] = q
            C[5] = r
            F[0] = 7 / 2
            F[1] = -7 / 2

    return main


def test_constant_div_mod_fold_with_python_semantics():
    c, f = poison(6, "int32"), poison(2, "float32")
    folded_div_mod()(c, f)
    assert_close(c, np.array([-4, 2, -2, -4, -4, 3]), "int32")
    assert_close(f, np.array([3.5, -3.5]), "float32", exact=True)


@jit
def true_division(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
             I: T.Tensor((n,), "int32"), J: T.Tensor((n,), "int32"),
             C: T.Tensor((2, n), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[0, i] = A[i] / B[i]
                C[1, i] = I[i] / J[i]

    return main


def test_true_division(rng):
    n = 40
    a, b = rand(n, "float32", rng), rand(n, "float32", rng)
    i = rand(n, "int32", rng, low=-50, high=50)
    j = rand(n, "int32", rng, low=1, high=9) * np.where(rng.random(n) < 0.5, -1, 1).astype(np.int32)
    c = poison((2, n), "float32")
    true_division(n)(a, b, i, j, c)
    assert_close(c[0], a.astype(np.float64) / b, "float32", what="float / float")
    # `/` is true division for integers too (7 / 2 == 3.5), as in Python.
    assert_close(c[1], i.astype(np.float64) / j, "float32", what="int / int")


# --- control flow --------------------------------------------------------------

@jit
def piecewise(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                x = A[i]
                if x < -0.5:
                    C[i] = x * 2
                elif x < 0.25:
                    C[i] = 0.5
                elif x < 0.75:
                    C[i] = -x
                else:
                    C[i] = x + 1

    return main


def test_if_elif_else(rng):
    n = 200
    a = rand(n, "float32", rng, low=-1.0, high=1.0).astype(np.float32)
    c = poison(n, "float32")
    piecewise(n)(a, c)
    x = a.astype(np.float64)
    expected = np.select([x < -0.5, x < 0.25, x < 0.75], [x * 2, 0.5, -x], x + 1)
    assert_close(c, expected, "float32")


@jit
def collatz_steps(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "int32"), C: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            v = T.alloc_local((1,), "int32")
            steps = T.alloc_local((1,), "int32")
            for i in T.serial(n):
                v[0] = A[i]
                steps[0] = 0
                while v[0] != 1:
                    if v[0] % 2 == 0:
                        v[0] = v[0] // 2
                    else:
                        v[0] = 3 * v[0] + 1
                    steps[0] += 1
                C[i] = steps[0]

    return main


def collatz_reference(v):
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


def test_while_loop(rng):
    a = np.concatenate([[1, 2, 3, 27], rand(20, "int32", rng, low=1, high=200)]).astype(np.int32)
    c = poison(a.size, "int32")
    collatz_steps(a.size)(a, c)
    assert_close(c, np.array([collatz_reference(int(v)) for v in a]), "int32")


@jit
def select_and_logic(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), K: T.Tensor((n,), "int32"),
             C: T.Tensor((n,), "float32"), F: T.Tensor((7, n), "int32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                x = A[i]
                k = K[i]
                C[i] = T.if_then_else(x > 0, x, x * 0.125)
                F[0, i] = T.if_then_else(x > 0, 1, 0)
                F[1, i] = T.if_then_else(x >= 0.5, 1, 0)
                F[2, i] = T.if_then_else(x < -0.5 or x > 0.875, 1, 0)
                F[3, i] = T.if_then_else(not (x <= 0.25), 1, 0)
                F[4, i] = T.if_then_else(k == 0 and x < 0, 1, 0)
                F[5, i] = T.if_then_else(k != 1, 1, 0)
                F[6, i] = T.if_then_else(k <= -1 or (k > 1 and not x > 0), 1, 0)

    return main


def test_if_then_else_comparisons_and_boolean_ops(rng):
    n = 300
    a = rand(n, "float32", rng, low=-1.0, high=1.0).astype(np.float32)
    k = rand(n, "int32", rng, low=-2, high=2)
    c = poison(n, "float32")
    f = poison((7, n), "int32")
    select_and_logic(n)(a, k, c, f)
    x = a.astype(np.float64)
    assert_close(c, np.where(x > 0, x, x * 0.125), "float32", what="T.if_then_else")
    expected = [x > 0, x >= 0.5, (x < -0.5) | (x > 0.875), ~(x <= 0.25), (k == 0) & (x < 0),
                k != 1, (k <= -1) | ((k > 1) & ~(x > 0))]
    for row, e in enumerate(expected):
        assert_close(f[row], e.astype(np.int32), "int32", what=f"flag {row}")


@jit
def infinities(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((4,), "float32"),
             H: T.Tensor((2,), "float16")):
        with T.Kernel(1, threads=128) as bx:
            m = T.alloc_local((1,), "float32")
            m[0] = -T.infinity("float32")
            for i in T.serial(n):
                m[0] = T.max(m[0], A[i])
            C[0] = m[0]
            C[1] = T.infinity("float32")
            C[2] = -T.infinity("float32")
            C[3] = T.min(T.infinity("float32"), A[0])
            H[0] = T.infinity("float16")
            H[1] = -T.infinity("float16")

    return main


def test_infinity(rng):
    a = rand(50, "float32", rng)
    c, h = poison(4, "float32"), poison(2, "float16")
    infinities(50)(a, c, h)
    assert_close(c, np.array([a.max(), np.inf, -np.inf, a[0]]), "float32", exact=True)
    assert_close(h, np.array([np.inf, -np.inf]), "float16", exact=True)


@jit
def casts_and_ceildiv(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), I: T.Tensor((n,), "int32"),
             P: T.Tensor((n,), "int32"), Q: T.Tensor((n,), "int32"),
             C: T.Tensor((n,), "int32"), D: T.Tensor((n,), "float32"),
             E: T.Tensor((n,), "float64"), G: T.Tensor((n + 1,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[i] = T.cast(A[i], "int32")
                D[i] = T.cast(I[i], "float32") / 4
                E[i] = T.cast(A[i], "float64") * T.cast(A[i], "float64")
                G[i] = T.ceildiv(P[i], Q[i])
            G[n] = T.ceildiv(100, 32)

    return main


def test_cast_and_ceildiv(rng):
    n = 64
    a = (rand(n, "float32", rng) * 50).astype(np.float32)
    i = rand(n, "int32", rng, low=-5000, high=5000)
    p = rand(n, "int32", rng, low=0, high=100)
    q = rand(n, "int32", rng, low=1, high=12)
    c, d = poison(n, "int32"), poison(n, "float32")
    e, g = poison(n, "float64"), poison(n + 1, "int32")
    casts_and_ceildiv(n)(a, i, p, q, c, d, e, g)
    assert_close(c, np.trunc(a), "int32", what="float32 -> int32 truncates toward zero")
    assert_close(d, i / 4, "float32", exact=True, what="int32 -> float32")
    # The product is exact in float64 but not in float32: the cast happened first.
    assert_close(e, a.astype(np.float64) ** 2, "float64", exact=True, what="float32 -> float64")
    assert_close(g, np.append(-(-p // q), 4), "int32", what="T.ceildiv")


# --- compile-time evaluation ---------------------------------------------------

@jit
def const_branches(n, flag, mode, op):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((3, n), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                if flag:
                    C[0, i] = A[i] + 1
                else:
                    C[0, i] = A[i] - 1
                if mode == 0:
                    C[1, i] = A[i] * 2
                elif mode == 1:
                    C[1, i] = A[i] * 3
                else:
                    C[1, i] = A[i] * 4
                if op == "neg":
                    C[2, i] = -A[i]
                else:
                    C[2, i] = A[i]

    return main


@pytest.mark.parametrize("flag,mode,op", [(True, 0, "neg"), (False, 1, "id"), (False, 2, "neg")])
def test_constant_if_picks_a_branch(flag, mode, op, rng):
    n = 16
    a = rand(n, "float32", rng)
    c = poison((3, n), "float32")
    const_branches(n, flag, mode, op)(a, c)
    x = a.astype(np.float64)
    assert_close(c[0], x + 1 if flag else x - 1, "float32", what="if flag")
    assert_close(c[1], x * (mode + 2), "float32", what="if mode == ...")
    assert_close(c[2], -x if op == "neg" else x, "float32", what="if op == 'neg'")


@jit
def python_constants(n, block):
    scale = 1.0 / 3          # computed by Python, folded into the kernel
    offset = n // 2 - 7      # may be negative

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((2, n), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[0, bx * block + i] = A[bx * block + i] * scale + offset
                    C[1, bx * block + i] = A[bx * block + i] * (block // 2 + 1)

    return main


@pytest.mark.parametrize("n", [10, 40])
def test_python_constants_fold(n, rng):
    a = rand(n, "float32", rng)
    c = poison((2, n), "float32")
    python_constants(n, 16)(a, c)
    assert_close(c[0], a.astype(np.float64) / 3 + (n // 2 - 7), "float32")
    assert_close(c[1], a.astype(np.float64) * 9, "float32")


@jit
def tuple_unpacking(M, N, block):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block[1]), T.ceildiv(M, block[0]), threads=128) as (bx, by):
            bm, bn = block
            for i, j in T.Parallel(bm, bn):
                r, c = by * bm + i, bx * bn + j
                if r < M and c < N:
                    a, b = A[r, c], B[r, c]
                    C[r, c] = a * 10 + b

    return main


def test_tuple_unpacking(rng):
    M, N = 40, 21
    a, b = rand((M, N), "float32", rng), rand((M, N), "float32", rng)
    c = poison((M, N), "float32")
    tuple_unpacking(M, N, (16, 8))(a, b, c)
    assert_close(c, a.astype(np.float64) * 10 + b, "float32")


@jit
def constant_range(n, width):
    @T.prim_func
    def main(A: T.Tensor((n, width), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_local((1,), "float32")
            for i in T.serial(n):
                acc[0] = 0.0
                for j in range(width):
                    if j % 2 == 0:
                        acc[0] += A[i, j]
                    else:
                        acc[0] -= A[i, j] * j
                for j in range(1, width, 3):
                    acc[0] += A[i, j] * 100
                C[i] = acc[0]

    return main


def test_range_over_constants(rng):
    n, width = 9, 7
    a = rand((n, width), "float32", rng)
    c = poison(n, "float32")
    constant_range(n, width)(a, c)
    j = np.arange(width)
    weights = np.where(j % 2 == 0, 1.0, -j) + np.where((j >= 1) & ((j - 1) % 3 == 0), 100.0, 0.0)
    assert_close(c, a.astype(np.float64) @ weights, "float32", scale=np.abs(a) @ np.abs(weights))


@T.macro
def axpy(dst, src, alpha, n):
    for i in T.Parallel(n):
        dst[i] = dst[i] + alpha * src[i]


@T.macro
def axpy_twice(dst, src, alpha, n):
    axpy(dst, src, alpha, n)
    axpy(dst, src, alpha, n)


@jit
def macro_kernel(n, block):
    @T.macro
    def load(dst, src, start):
        T.copy(src[start], dst)

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
             S: T.Tensor((1,), "float32"), Z: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            x_f = T.alloc_fragment((block,), "float32")
            y_f = T.alloc_fragment((block,), "float32")
            load(x_f, X, bx * block)
            load(y_f, Y, bx * block)
            axpy(y_f, x_f, 2.0, block)
            axpy_twice(y_f, x_f, S[0] * 0.5, block)
            T.copy(y_f, Z[bx * block])

    return main


@pytest.mark.parametrize("n", [32, 50])
def test_macro_inlined_with_buffers_and_expressions(n, rng):
    x, y, s = rand(n, "float32", rng), rand(n, "float32", rng), rand(1, "float32", rng)
    z = poison(n, "float32")
    macro_kernel(n, 16)(x, y, s, z)
    # y + 2x, then twice y += (s/2) x
    expected = y.astype(np.float64) + 2 * x + s[0] * x.astype(np.float64)
    assert_close(z, expected, "float32")


@T.prim_func
def scale_rows(A: T.Tensor((4, 8), "float32"), factor: T.float32):
    for i, j in T.Parallel(4, 8):
        A[i, j] = A[i, j] * factor


@jit
def helper_prim_func_kernel():
    @T.prim_func
    def main(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_fragment((4, 8), "float32")
            T.copy(A, a)
            scale_rows(a, 3.0)
            T.copy(a, B)

    return main


def test_helper_prim_func_is_inlined_with_its_arguments(rng):
    a, b = rand((4, 8), "float32", rng), poison((4, 8), "float32")
    helper_prim_func_kernel()(a, b)
    assert_close(b, a.astype(np.float64) * 3, "float32")


# --- T.reinterpret: the bits of a value read as another dtype of its size ------------------

@jit
def reinterpret_bits(n, src_dtype, dst_dtype):
    @T.prim_func
    def main(X: T.Tensor((n,), src_dtype), Y: T.Tensor((n,), dst_dtype), Z: T.Tensor((n,), src_dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                bits = T.reinterpret(X[i], dst_dtype)
                Y[i] = bits
                Z[i] = T.reinterpret(bits, src_dtype)

    return main


@pytest.mark.parametrize("src_dtype,dst_dtype", [("float32", "int32"), ("float16", "int16"), ("bfloat16", "int16"),
                                                 ("float64", "int64"), ("float8_e4m3", "uint8"), ("int32", "float32")])
def test_reinterpret_keeps_the_bits(rng, src_dtype, dst_dtype):
    n = 200
    X = rand((n,), src_dtype, rng)
    Y, Z = poison((n,), dst_dtype), poison((n,), src_dtype)
    reinterpret_bits(n, src_dtype, dst_dtype)(X, Y, Z)
    np.testing.assert_array_equal(Y.view(np.uint8), X.view(np.uint8))
    np.testing.assert_array_equal(Z.view(np.uint8), X.view(np.uint8))


@jit
def reinterpret_of_another_size():
    @T.prim_func
    def main(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "int16")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(8):
                Y[i] = T.reinterpret(X[i], "int16")  # ERR:reinterpret-size

    return main


def test_reinterpret_between_sizes_is_an_error():
    with pytest.raises(tilec.CompileError) as info:
        reinterpret_of_another_size()
    check_diagnostic(str(info.value), __file__, "ERR:reinterpret-size", "32 bits", "int16 16")


# --- TileLang's spellings: T.Cast, T.floordiv, T.floormod, T.clamp, T.Serial ----------------

@jit
def tilelang_spellings(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "int32"), B: T.Tensor((n,), "int32"), X: T.Tensor((n,), "float32"),
             Q: T.Tensor((n,), "int32"), R: T.Tensor((n,), "int32"), C: T.Tensor((n,), "float32"),
             F: T.Tensor((n,), "float16"), S: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n):
                Q[i] = T.floordiv(A[i], B[i])
                R[i] = T.floormod(A[i], B[i])
                C[i] = T.clamp(X[i], -0.5, 0.25)
                F[i] = T.Cast("float16", X[i])
            for i in T.Serial(n):
                S[i] = A[i] + i

    return main


def test_tilelang_spellings_of_division_clamp_cast_and_serial(rng):
    n = 100
    A = rand((n,), "int32", rng)
    B = rand((n,), "int32", rng)
    B[B == 0] = 7
    X = rand((n,), "float32", rng)
    outs = [poison((n,), d) for d in ("int32", "int32", "float32", "float16", "int32")]
    tilelang_spellings(n)(A, B, X, *outs)
    Q, R, C, F, S = outs
    np.testing.assert_array_equal(Q, A // B)
    np.testing.assert_array_equal(R, A % B)
    np.testing.assert_array_equal(C, np.clip(X, -0.5, 0.25))
    np.testing.assert_array_equal(F, X.astype(np.float16))
    np.testing.assert_array_equal(S, A + np.arange(n))
