"""Several GPUs in one process: a kernel runs on the device of its tensors, on that device's
current stream, with its module built once and loaded once a device, and leaves the caller's
current device as it was; tensors on two devices in one call are refused."""

import random

import pytest

import tilec
import tilec.language as T
from tilec import _core

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not _core.cuda_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    torch.cuda.set_device(0)
    return torch


@tilec.jit(out_idx=[2], target="cuda")
def scale_add(block, salt=0):
    # salt: a constant that makes the source, and so the module, new to this process
    n = T.symbolic("n")

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"), Z: T.Tensor((n,), "float32"),
             alpha: T.float32):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n and n != salt + (1 << 30):
                    Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]

    return main


def test_tensors_on_two_devices_are_refused(torch):
    x, y = torch.ones(100, device="cuda:0"), torch.ones(100, device="cuda:1")
    with pytest.raises(ValueError, match="argument 'Y' is on CUDA device 1 but argument 'X' is on device 0"):
        scale_add(128)(x, y, 1.0)


def test_runs_on_the_tensors_device_and_keeps_the_current_one(torch):
    x, y = torch.randn(1000, device="cuda:1"), torch.randn(1000, device="cuda:1")
    z = scale_add(128)(x, y, 2.0)
    assert z.device == x.device and torch.cuda.current_device() == 0
    torch.testing.assert_close(z, 2.0 * x + y)


def test_each_device_loads_the_module_of_one_build_once(torch, capfd):
    salt = random.randrange(1 << 30)
    tilec.set_log_level("DEBUG")
    try:
        capfd.readouterr()
        for _ in range(3):
            for device in ("cuda:0", "cuda:1"):
                x, y = torch.randn(5000, device=device), torch.randn(5000, device=device)
                torch.testing.assert_close(scale_add(256, salt)(x, y, 0.5), 0.5 * x + y)
        log = capfd.readouterr().err
    finally:
        tilec.set_log_level("WARNING")
    lines = [line for line in log.splitlines() if "cuda module" in line]
    assert sum(": built " in line for line in lines) == 1, log
    for device in (0, 1):
        assert sum(line.endswith(f"loaded on device {device}") for line in lines) == 1, log


def test_a_graph_captured_on_the_second_device_replays_there(torch):
    kernel = scale_add(128)
    with torch.cuda.device(1):
        x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
        z = torch.empty(1000, device="cuda")
        kernel(x, y, z, 3.0)  # loads the module on device 1 before the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # a launch on any other stream would break the capture
            kernel(x, y, z, 3.0)
        x.copy_(torch.randn(1000, device="cuda"))
        z.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(z, 3.0 * x + y)


def test_library_ops_run_on_a_device_that_is_not_current(torch):
    from tilec.ops import dsa, gemm

    a = torch.randn(256, 512, dtype=torch.bfloat16)
    b = torch.randn(512, 384, dtype=torch.bfloat16)
    on = {d: gemm(a.to(d), b.to(d)) for d in ("cuda:0", "cuda:1")}
    assert on["cuda:1"].device == torch.device("cuda:1") and torch.cuda.current_device() == 0
    assert torch.equal(on["cuda:0"].cpu(), on["cuda:1"].cpu())

    S, H, D, heads, d_qk, d_v, topk = 77, 16, 32, 16, 96, 64, 24
    inputs = [torch.randn(S, H, D).to(torch.float8_e4m3fn), torch.rand(S, H) + 0.1,
              torch.randn(S, D).to(torch.float8_e4m3fn), torch.rand(S) + 0.5,
              torch.randn(S, heads, d_qk, dtype=torch.bfloat16), torch.randn(S, 1, d_qk, dtype=torch.bfloat16)]
    results = {d: dsa.attention_prefill(*(t.to(d) for t in inputs), topk=topk, d_v=d_v) for d in ("cuda:0", "cuda:1")}
    assert all(t.device == torch.device("cuda:1") for t in results["cuda:1"])
    for first, second in zip(results["cuda:0"], results["cuda:1"]):
        assert torch.equal(first.cpu(), second.cpu())
