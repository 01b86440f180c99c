"""T.annotate_min_blocks_per_sm(n), TileLang's occupancy hint: __launch_bounds__(threads, n) on
CUDA, so that ptxas keeps each thread's registers few enough for n blocks an SM. Other targets
take it as the hint it is and change nothing. Its checks are errors at its line; what it does to
setmaxnreg's counts is in test_hopper.py."""

import re

import numpy as np
import pytest

import tilec.language as T
from tilec import CompileError

from helpers import assert_close, build_for_cuda, jit, poison, prim_func_from_text, rand, rng  # noqa: F401
from test_hopper import emit


@jit
def scaled(n, min_blocks, threads=128):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx:
            T.annotate_min_blocks_per_sm(min_blocks)
            for i in T.Parallel(threads):
                if bx * threads + i < n:
                    Y[bx * threads + i] = X[bx * threads + i] * 3

    return main


def test_the_hinted_kernel_computes_the_same(rng):
    x, y = rand((1000,), "float32", rng), poison((1000,), "float32")
    scaled(1000, 4)(x, y)
    assert_close(y, x.astype(np.float64) * 3, "float32")


@pytest.mark.parametrize("min_blocks,bounds", [(3, "__launch_bounds__(128, 3)"), (16, "__launch_bounds__(128, 16)")])
def test_it_is_launch_bounds_second_argument_on_cuda(min_blocks, bounds):
    assert bounds in build_for_cuda(scaled, "sm_90a", n=1000, min_blocks=min_blocks)


def test_the_ir_shows_it():
    assert "T.annotate_min_blocks_per_sm(3)" in emit(scaled.__wrapped__(1000, 3), "ir")


def kernel_text(body, folder):
    return prim_func_from_text(
        "import tilec.language as T\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((256,), 'float32')):\n"
        + "".join(line + "\n" for line in body), folder)


@pytest.mark.parametrize("body,line,message", [
    (["    T.annotate_min_blocks_per_sm(2)", "    with T.Kernel(1, threads=128) as bx:", "        A[bx] = 1.0"], 4,
     "T.annotate_min_blocks_per_sm goes inside a T.Kernel block"),
    (["    with T.Kernel(1, threads=128) as bx:", "        T.annotate_min_blocks_per_sm(0)"], 5,
     "T.annotate_min_blocks_per_sm takes 1 to 32 blocks, not 0"),
    (["    with T.Kernel(1, threads=128) as bx:", "        T.annotate_min_blocks_per_sm(33)"], 5,
     "T.annotate_min_blocks_per_sm takes 1 to 32 blocks, not 33"),
    (["    with T.Kernel(1, threads=512) as bx:", "        T.annotate_min_blocks_per_sm(5)"], 5,
     "T.annotate_min_blocks_per_sm(5) of 512-thread blocks is 2560 threads, more than an SM holds (2048)"),
    (["    with T.Kernel(1, threads=128) as bx:", "        T.annotate_min_blocks_per_sm(2)",
      "        T.annotate_min_blocks_per_sm(3)"], 6, "T.annotate_min_blocks_per_sm is given twice in this T.Kernel block"),
])
def test_mistakes_are_errors_at_their_line(body, line, message, tmp_path):
    with pytest.raises(CompileError, match=rf"kernel.py:{line}:\d+: error: " + re.escape(message)):
        emit(kernel_text(body, tmp_path), "ir")
