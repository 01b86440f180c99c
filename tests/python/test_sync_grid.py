"""T.sync_grid: a barrier of every thread of the grid (TileLang's persistent MLA decode splits its
two phases so). CUDA launches the kernel cooperatively, every block resident at once; a grid
larger than the GPU holds is an error before anything runs; other targets refuse it."""

import pytest

import tilec
import tilec.language as T
from tilec import CompileError
from test_hopper import emit, hopper_or_skip


def rotate_rows(n, threads=128):
    """Y[b] = 2 X[b + 1] + 1: block b reads a row another block wrote before the barrier."""

    @T.prim_func
    def main(X: T.Tensor((n, threads), "float32"), Y: T.Tensor((n, threads), "float32")):
        with T.Kernel(n, threads=threads) as bx:
            tx = T.get_thread_binding()
            Y[bx, tx] = X[bx, tx] * 2
            T.sync_grid()
            v = Y[(bx + 1) % n, tx]
            T.sync_grid()
            Y[bx, tx] = v + 1

    return main


def test_the_kernel_says_it_waits_for_its_grid():
    ir = emit(rotate_rows(132), "ir")
    assert "# cooperative: every block resident at once (T.sync_grid)" in ir
    source = emit(rotate_rows(132), "source")
    assert '#include "cuda/grid_sync.h"' in source and source.count("tilec_cuda::sync_grid();") == 2
    assert "%envreg1" in emit(rotate_rows(132), "ptx")


def test_targets_without_cooperative_launches_refuse_it():
    with pytest.raises(CompileError, match=r"test_sync_grid\.py:\d+:\d+: error: T.sync_grid needs CUDA's cooperative "
                                           r"launch"):
        tilec.compile(rotate_rows(4), target="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 7, 132, 264])
def test_blocks_see_what_the_others_wrote_before_the_barrier(n):
    torch = hopper_or_skip()
    x = torch.randn(n, 128, device="cuda")
    y = torch.full((n, 128), float("nan"), device="cuda")
    tilec.compile(rotate_rows(n))(x, y)
    torch.cuda.synchronize()
    assert torch.equal(y, x.roll(-1, dims=0) * 2 + 1)


@pytest.mark.gpu
def test_a_grid_larger_than_the_gpu_holds_is_refused_before_it_runs():
    torch = hopper_or_skip()
    n = 100_000  # more blocks of 1024 threads than any GPU holds at once
    kernel = tilec.compile(rotate_rows(n, threads=1024))
    x = torch.randn(n, 1024, device="cuda")
    y = torch.zeros(n, 1024, device="cuda")
    with pytest.raises(RuntimeError, match=r"waits for its whole grid \(T.sync_grid\), so its 100000 blocks must "
                                           r"all be resident at once; this GPU holds \d+"):
        kernel(x, y)
    torch.cuda.synchronize()
    assert torch.count_nonzero(y) == 0
