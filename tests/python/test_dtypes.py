"""Every dtype through the Python face and the backend under test.

float16/bfloat16/float8 are converted in software with round-to-nearest-even;
every conversion must equal NumPy's / ml_dtypes' own bit for bit (including
NaN for float8_e4m3 overflow and inf for float16/bfloat16/float8_e5m2
overflow). bfloat16 and float8 arrays are ml_dtypes arrays.
"""

import warnings

import numpy as np
import pytest

import tilec.language as T

from helpers import (ALL_DTYPES, FLOAT_DTYPES, assert_close, jit, np_dtype, poison, rand,
                     rng)  # noqa: F401  (rng is a fixture)

SOFT_FLOATS = ["float16", "bfloat16", "float8_e4m3", "float8_e5m2"]


def convert(x, dtype):
    """NumPy's / ml_dtypes' conversion of `x` to `dtype` (overflow warnings off)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(x).astype(np_dtype(dtype))


# --- copies keep every value ---------------------------------------------------

@jit
def copy_2d(M, N, dtype, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, block), dtype)
            A_f = T.alloc_fragment((block, block), dtype)
            T.copy(A[by * block, bx * block], A_s)
            T.copy(A_s, A_f)
            T.copy(A_f, B[by * block, bx * block])

    return main


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_copy_each_dtype(dtype, rng):
    M, N = 48, 61
    a = rand((M, N), dtype, rng)
    b = poison((M, N), dtype)
    assert copy_2d(M, N, dtype)(a, b) is None
    if dtype in FLOAT_DTYPES:
        assert_close(b, a, dtype, exact=True)
    else:
        assert_close(b, a, dtype)


def all_bit_patterns(dtype):
    bits = np.arange(2 ** (np_dtype(dtype).itemsize * 8))
    uint = np.uint8 if np_dtype(dtype).itemsize == 1 else np.uint16
    return bits.astype(uint).view(np_dtype(dtype))


@pytest.mark.parametrize("dtype", SOFT_FLOATS)
def test_copy_keeps_every_bit_pattern(dtype):
    a = all_bit_patterns(dtype).reshape(-1, 256)
    b = poison(a.shape, dtype)
    copy_2d(a.shape[0], 256, dtype)(a, b)
    assert_close(b, a, dtype, exact=True)


# --- conversions ---------------------------------------------------------------

def _cast(n, src_dtype, dst_dtype, block=256):
    @T.prim_func
    def main(X: T.Tensor((n,), src_dtype), Y: T.Tensor((n,), dst_dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Y[bx * block + i] = T.cast(X[bx * block + i], dst_dtype)

    return main


cast_in_place = jit(_cast)
cast_out = jit(_cast, out_idx=[-1])


def run_cast(x, src, dst):
    y = poison(x.shape, dst)
    cast_in_place(x.size, src, dst)(x, y)
    return y


def rounding_probes(dtype):
    """float32 values that exercise rounding to `dtype`: every finite value of
    the type, every midpoint between neighbours (ties: the even one wins), the
    float32 values just above and below each midpoint, values past the largest
    finite one (overflow), subnormals, signed zeros, infinities and NaN."""
    vals = all_bit_patterns(dtype).astype(np.float64)
    finite = np.unique(vals[np.isfinite(vals)])
    mids = (finite[:-1] + finite[1:]) / 2
    top, below_top = finite[-1], finite[-2]
    beyond = [top + (top - below_top) / 2, top + (top - below_top) * 0.75, top * 2, 1e30]
    mids32 = mids.astype(np.float32)
    probes = np.concatenate([
        finite, mids,
        np.nextafter(mids32, np.float32(np.inf)), np.nextafter(mids32, np.float32(-np.inf)),
        beyond, [-b for b in beyond],
    ])
    with np.errstate(over="ignore"):
        x = probes.astype(np.float32)
    x = x[x.astype(np.float64) == probes]  # keep what float32 holds exactly
    tiny = np.float32(1e-45)  # the smallest float32 subnormal
    return np.concatenate([x, np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan]),
                           [tiny, -tiny, tiny * 1000, np.float32(1e-40)]])


@pytest.mark.parametrize("dtype", SOFT_FLOATS)
def test_cast_float32_to_soft_float_rounds_to_nearest_even(dtype):
    x = rounding_probes(dtype)
    y = run_cast(x, "float32", dtype)
    assert_close(y, convert(x, dtype), dtype, exact=True)


def test_float8_e4m3_overflow_is_nan():
    x = np.float32([448.0, 464.0, 465.0, 480.0, 1e6, np.inf, -464.0, -465.0, -np.inf])
    y = run_cast(x, "float32", "float8_e4m3")
    got = y.astype(np.float64)
    # 464 is the tie between 448 and the (missing) 480: it rounds to 448.
    assert got[0] == 448.0 and got[1] == 448.0 and got[6] == -448.0
    assert np.isnan(got[[2, 3, 4, 5, 7, 8]]).all(), got
    assert_close(y, convert(x, "float8_e4m3"), "float8_e4m3", exact=True)


@pytest.mark.parametrize("dtype", SOFT_FLOATS)
def test_cast_soft_float_to_float32_is_exact(dtype):
    x = all_bit_patterns(dtype)
    y = run_cast(x, dtype, "float32")
    assert_close(y, convert(x, "float32"), "float32", exact=True)


@pytest.mark.parametrize("src,dst", [
    ("float16", "bfloat16"), ("bfloat16", "float16"), ("float16", "float8_e4m3"),
    ("bfloat16", "float8_e5m2"), ("float8_e4m3", "float8_e5m2"), ("float8_e5m2", "float8_e4m3"),
    ("float8_e4m3", "float16"), ("bfloat16", "float64"),
])
def test_cast_between_soft_floats(src, dst):
    x = all_bit_patterns(src)
    y = run_cast(x, src, dst)
    # Widening to float32 is exact, so this is one rounding of the exact value.
    assert_close(y, convert(convert(x, "float32"), dst), dst, exact=True)


def test_cast_float32_float64(rng):
    x32 = (rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000)).astype(np.float32)
    y = run_cast(x32, "float32", "float64")
    assert_close(y, x32.astype(np.float64), "float64", exact=True)
    # float64 -> float32: midpoints between float32 neighbours and their neighbours.
    up = np.nextafter(x32, np.float32(np.inf))
    mids = (x32.astype(np.float64) + up) / 2
    x64 = np.concatenate([mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                          [1e39, -1e39, 1e-50, -1e-50, np.inf, np.nan, -0.0]])
    y = run_cast(x64, "float64", "float32")
    assert_close(y, convert(x64, "float32"), "float32", exact=True)


def int_cast_inputs(src, rng):
    """The extremes of an integer type, 0, +-1 and random values of the type."""
    if src == "bool":
        return np.array([True, False, True, True, False])
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1),
              "int64": (-2**62, 2**62)}[src]
    fixed = np.array([lo, hi, 0, 1, -1 if lo < 0 else 2], dtype=np_dtype(src))
    return np.concatenate([fixed, rng.integers(lo, hi, 500, endpoint=True).astype(np_dtype(src))])


# Ranges of float32 inputs whose truncation fits the integer type.
FLOAT_TO_INT_RANGES = {"int8": (-128.9, 127.9), "uint8": (0.0, 255.9), "int32": (-1e6, 1e6),
                       "int64": (-1e12, 1e12)}


@pytest.mark.parametrize("dst", ["int8", "uint8", "int32", "int64"])
def test_cast_float32_to_int_truncates(dst, rng):
    low, high = FLOAT_TO_INT_RANGES[dst]
    x = rng.uniform(low, high, 500).astype(np.float32)
    x = np.concatenate([x, np.float32([0.5, 1.5, 2.5, 0.0, -0.0])])
    if dst != "uint8":
        x = np.concatenate([x, np.float32([-0.5, -1.5, -2.5, -7.99])])
    y = run_cast(x, "float32", dst)
    assert_close(y, np.trunc(x).astype(np_dtype(dst)), dst)


def test_cast_float32_to_bool():
    x = np.float32([0.0, -0.0, 1.0, -1e-30, 1e-45, np.inf, np.nan, 0.5])
    y = run_cast(x, "float32", "bool")
    assert_close(y, x.astype(np.bool_), "bool")


@pytest.mark.parametrize("src,dst", [
    ("int32", "float32"), ("int64", "float64"), ("int8", "float16"), ("uint8", "bfloat16"),
    ("int8", "int32"), ("uint8", "int32"), ("bool", "float32"), ("int32", "float64"),
    ("uint8", "float8_e4m3"),
])
def test_cast_from_integers(src, dst, rng):
    x = int_cast_inputs(src, rng)
    y = run_cast(x, src, dst)
    if dst in FLOAT_DTYPES:
        assert_close(y, convert(x, dst), dst, exact=True)
    else:
        assert_close(y, x.astype(np_dtype(dst)), dst)


def test_cast_int32_to_float16_rounds_and_overflows(rng):
    # |x| < 2**24: int32 -> float32 is exact, so float16's rounding is the only one.
    x = np.concatenate([np.int32([2049, 2051, 4097, 65504, 65519, 65520, 70000, -65520]),
                        rng.integers(-70000, 70000, 500).astype(np.int32)])
    y = run_cast(x, "int32", "float16")
    assert_close(y, convert(x, "float16"), "float16", exact=True)


# --- outputs allocated by the Python face ---------------------------------------

@pytest.mark.parametrize("dst", ["bfloat16", "float8_e4m3", "float8_e5m2", "float16", "bool",
                                 "int8"])
def test_allocated_output_has_the_kernels_dtype(dst, rng):
    x = (rand(100, "float32", rng) * 4).astype(np.float32)
    y = cast_out(100, "float32", dst)(x)
    assert isinstance(y, np.ndarray)
    assert y.dtype == np_dtype(dst), f"output dtype {y.dtype}, expected {np_dtype(dst)}"
    if dst in FLOAT_DTYPES:
        assert_close(y, convert(x, dst), dst, exact=True)
    elif dst == "bool":
        assert_close(y, x != 0, dst)
    else:
        assert_close(y, np.trunc(x).astype(np_dtype(dst)), dst)


# --- arithmetic in each type ---------------------------------------------------

@jit
def add_mul(n, dtype, block=32):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), S: T.Tensor((n,), dtype),
             P: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    S[bx * block + i] = A[bx * block + i] + B[bx * block + i]
                    P[bx * block + i] = A[bx * block + i] * B[bx * block + i]

    return main


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_arithmetic_rounds_once(dtype, rng):
    n = 100
    a, b = rand(n, dtype, rng), rand(n, dtype, rng)
    s, p = poison(n, dtype), poison(n, dtype)
    add_mul(n, dtype)(a, b, s, p)
    x, y = a.astype(np.float64), b.astype(np.float64)
    assert_close(s, x + y, dtype, what="+")
    assert_close(p, x * y, dtype, what="*")


@jit
def int_arith(n, dtype):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                C[i] = A[i] + B[i] * 2 - 3

    return main


@pytest.mark.parametrize("dtype,low,high", [("int8", -30, 30), ("uint8", 2, 50),
                                            ("int32", -10**6, 10**6),
                                            ("int64", -10**15, 10**15)])
def test_int_arithmetic(dtype, low, high, rng):
    n = 64
    a, b = rand(n, dtype, rng, low=low, high=high), rand(n, dtype, rng, low=low, high=high)
    c = poison(n, dtype)
    int_arith(n, dtype)(a, b, c)
    assert_close(c, a.astype(np.int64) + b.astype(np.int64) * 2 - 3, dtype)


@jit
def bool_ops(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), M: T.Tensor((n,), "bool"),
             P: T.Tensor((n,), "bool"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.serial(n):
                P[i] = A[i] > 0
                C[i] = T.if_then_else(M[i], A[i], -A[i])

    return main


def test_bool_tensors(rng):
    n = 64
    a, m = rand(n, "float32", rng), rand(n, "bool", rng)
    p = np.zeros(n, dtype=np.bool_)
    p[a <= 0] = True  # the opposite of the answer, so unwritten elements show
    c = poison(n, "float32")
    bool_ops(n)(a, m, p, c)
    assert_close(p, a > 0, "bool")
    assert_close(c, np.where(m, a, -a), "float32", exact=True)


# --- gemm with low-precision inputs --------------------------------------------

@jit
def gemm_mixed(M, N, K, in_dtype, accum_dtype, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor((K, N), in_dtype),
             C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, block), in_dtype)
            B_s = T.alloc_shared((block, block), in_dtype)
            C_f = T.alloc_fragment((block, block), accum_dtype)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
                T.copy(A[by * block, k * block], A_s)
                T.copy(B[k * block, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block, bx * block])

    return main


@pytest.mark.parametrize("in_dtype,accum_dtype", [("float16", "float32"),
                                                  ("bfloat16", "float32"),
                                                  ("float64", "float64")])
def test_gemm_low_precision_inputs(in_dtype, accum_dtype, rng):
    M, N, K = 48, 40, 70
    a, b = rand((M, K), in_dtype, rng), rand((K, N), in_dtype, rng)
    c = poison((M, N), accum_dtype)
    gemm_mixed(M, N, K, in_dtype, accum_dtype)(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    # Products of half-precision values are exact in float32: only the sum rounds.
    assert_close(c, a64 @ b64, accum_dtype, scale=np.abs(a64) @ np.abs(b64))


def test_float16_arrays_pass_directly(rng):
    a = rand((8, 8), "float16", rng)
    assert a.dtype == np.float16 and type(a) is np.ndarray
    y = cast_out(64, "float16", "float32")(a.reshape(-1))
    assert_close(y, a.reshape(-1).astype(np.float64), "float32", exact=True)
