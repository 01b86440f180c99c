"""Python objects that kernel source names (modules, classes, builtin functions, other
libraries' objects) are used while the kernel compiles: their attributes are read and they are
called in Python, with compile-time arguments, and what they give is a compile-time value
(frontend/host_calls.cc). TileLang's eager bodies run in Python, so its programs use them:
math.ceil(seqlen / block), tilelang.math.next_power_of_2(dim), driver.get_num_sms()."""

import math

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import capture

from helpers import assert_close, check_diagnostic, jit, poison, rand, rng  # noqa: F401
from test_errors import compile_error

HERE = __file__


class TileConfig:
    """An object of the program's own, read in a kernel."""

    def __init__(self, block):
        self.block = block

    def blocks(self, n):
        return -(-n // self.block)


@jit
def scaled_rows(n, width, config):
    padded = tilec.math.next_power_of_2(width)
    scale = 1.0 / math.sqrt(padded)

    @T.prim_func
    def main(A: T.Tensor((n, width), "float32"), B: T.Tensor((n, width), "float32")):
        with T.Kernel(math.ceil(n / config.block), threads=128) as bx:
            for i, j in T.Parallel(config.block, width):
                if bx * config.block + i < n:
                    B[bx * config.block + i, j] = A[bx * config.block + i, j] * scale + config.blocks(n)

    return main


@pytest.mark.parametrize("n,width,block", [(100, 24, 32), (64, 32, 16)])
def test_modules_and_objects_are_read_while_compiling(rng, n, width, block):
    A = rand((n, width), "float32", rng)
    B = poison((n, width), "float32")
    scaled_rows(n, width, TileConfig(block))(A, B)
    padded = 1 << (width - 1).bit_length()
    expected = A.astype(np.float64) / math.sqrt(padded) + math.ceil(n / block)
    assert_close(B, expected, "float32")


@jit
def eager_scaled(A, block=32):
    n = T.const("n")
    A: T.Tensor((n,), "float32")
    B = T.empty((n,), "float32")
    with T.Kernel(math.ceil(n / block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < n:
                B[bx * block + i] = A[bx * block + i] * math.log2(block)
    return B


def test_eager_body_calls_math_on_its_constants(rng):
    A = rand((70,), "float32", rng)
    assert_close(eager_scaled(A), A.astype(np.float64) * 5, "float32")


def test_host_objects_are_tagged_as_such():
    assert capture.to_core_value(math) == ("host", math)
    assert capture.to_core_value(math.ceil) == ("host", math.ceil)
    assert capture.to_core_value(TileConfig) == ("host", TileConfig)
    config = TileConfig(4)
    assert capture.to_core_value(config) == ("host", config)
    # What the core gets back from Python: a function stays in Python.
    assert capture.host_result(tilec.math.next_power_of_2) == ("host", tilec.math.next_power_of_2)
    assert capture.host_result(3) == ("int", 3)


@jit
def host_misuse(case):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if case == "runtime_argument":
                    A[i] = math.sqrt(A[i])  # ERR:host-runtime-argument
                elif case == "raises":
                    A[i] = math.sqrt(-1.0)  # ERR:host-raises
                elif case == "no_attribute":
                    A[i] = math.no_such_function(2.0)  # ERR:host-no-attribute
                else:
                    A[i] = math  # ERR:host-as-value

    return main


@pytest.mark.parametrize("case,marker,words", [
    ("runtime_argument", "ERR:host-runtime-argument", ("runs in python", "compile-time values")),
    ("raises", "ERR:host-raises", ("raised in python", "math domain error")),
    ("no_attribute", "ERR:host-no-attribute", ("no_such_function", "attributeerror")),
    ("as_value", "ERR:host-as-value", ("module math",)),
])
def test_host_misuse_is_a_located_error(case, marker, words):
    check_diagnostic(compile_error(host_misuse, case), HERE, marker, *words)
