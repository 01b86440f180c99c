"""T.prefetch_l2(X[i, j]): a hint that the line holding a global tensor's element be brought into
L2 (CUDA's prefetch.global.L2), for the load that follows; skipped for an element outside the
tensor; nothing on the CPU and on HIP. The FP8 sparse decode prefetches the tokens of the step
after next with it (docs/dsa.md)."""

import re

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import CompileError

from helpers import jit, poison, rng  # noqa: F401
from test_hip import build, needs_hipcc
from test_hopper import emit
from test_import_source import kernel_with


def gathered_rows(rows, cols, threads=32):
    """Row r of Y is row Index[r] of X (zeros past X), its line prefetched before the loads."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Index: T.Tensor((rows,), "int32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows, threads=threads) as r:
            tx = T.get_thread_binding()
            source_row = Index[r]
            if tx * 32 < cols:
                T.prefetch_l2(X[source_row, tx * 32])  # past X for an index past it: skipped
            for c in T.serial(T.ceildiv(cols, threads)):
                if c * threads + tx < cols:
                    Y[r, c * threads + tx] = X[source_row, c * threads + tx]

    return main


def test_a_prefetch_changes_no_result(rng):
    rows, cols = 48, 200
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    index = rng.integers(0, rows, rows).astype(np.int32)
    index[::5] = rows + 3  # past X: Y's row reads zeros, and nothing is prefetched there
    index[1] = -1
    y = poison((rows, cols), "float32")
    jit(gathered_rows)(rows, cols)(x, index, y)
    expected = np.where(((index >= 0) & (index < rows))[:, None], x[np.clip(index, 0, rows - 1)], 0)
    np.testing.assert_array_equal(y, expected)


def test_cuda_prefetches_the_line_where_the_element_is_inside_the_tensor():
    source = emit(gathered_rows(48, 200), "source")
    guard = re.search(r"if \(([^\n]*)\) \{\s*tilec_cuda::prefetch_l2\(\(&X\[", source)
    assert guard and "source_row) < INT64_C(48)" in guard.group(1) and "source_row) >= INT64_C(0)" in guard.group(1)
    assert "prefetch.global.L2" in emit(gathered_rows(48, 200), "ptx")


@needs_hipcc
def test_hipcc_builds_it_for_gfx90a(tmp_path):
    source = tilec.compile(gathered_rows(48, 200), target="hip", arch="gfx90a").get_kernel_source()
    assert "tilec_hip::prefetch_l2((&X[" in source
    build({"gathered_rows": source}, "gfx90a", tmp_path)


@pytest.mark.parametrize("lines,message", [
    (["T.prefetch_l2(X[0:4])"], "T.prefetch_l2 takes one element (index every dim of 'X')"),
    (["S = T.alloc_shared((32,), 'float32')", "T.prefetch_l2(S[0])"],
     "T.prefetch_l2 prefetches global memory; 'S' is shared"),
    (["T.prefetch_l2(X[0], 1)"], "T.prefetch_l2() takes 1 argument but 2 were given"),
])
def test_mistakes_are_errors_at_their_line(lines, message, tmp_path):
    with pytest.raises(CompileError, match=r"kernel.py:\d+:\d+: error: .*" + re.escape(message)):
        emit(kernel_with(lines, tmp_path), "ir")
