"""tilec.profiler: do_bench's counts and summaries (on a fake wall clock), and the Profiler of a
kernel (get_profiler) checking and timing it on supplied inputs, on the CPU and on a GPU."""

import os
import types

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core
from tilec.profiler import TensorSupplyType, do_bench
from tilec.profiler import bench


class FakeClock:
    """time.perf_counter for do_bench: each call of `fn` takes the next of `durations_ms`
    (the last repeats)."""

    def __init__(self, monkeypatch, durations_ms):
        self.now = 0.0
        self.durations = list(durations_ms)
        self.calls = 0
        monkeypatch.setattr(bench.time, "perf_counter", lambda: self.now)

    def fn(self):
        index = min(self.calls, len(self.durations) - 1)
        self.now += self.durations[index] * 1e-3
        self.calls += 1


def test_do_bench_runs_for_warmup_and_rep_milliseconds(monkeypatch):
    clock = FakeClock(monkeypatch, [2.0])
    assert do_bench(clock.fn, device="cpu") == pytest.approx(2.0)
    # one first call, 5 to estimate, 25 ms / 2 ms of warmup, 100 ms / 2 ms timed
    assert clock.calls == 1 + 5 + 12 + 50


def test_do_bench_counts_override_the_milliseconds(monkeypatch):
    clock = FakeClock(monkeypatch, [2.0])
    do_bench(clock.fn, warmup=1000, rep=1000, _n_warmup=3, _n_repeat=4, device="cpu")
    assert clock.calls == 1 + 5 + 3 + 4


def test_do_bench_runs_each_part_at_least_once(monkeypatch):
    clock = FakeClock(monkeypatch, [500.0])
    do_bench(clock.fn, device="cpu")
    assert clock.calls == 1 + 5 + 1 + 1


@pytest.mark.parametrize("mode, expected", [("mean", 2.5), ("median", 2.5), ("min", 1.0),
                                            ("max", 4.0)])
def test_do_bench_return_mode(monkeypatch, mode, expected):
    # the first run, the 5 of the estimate and the warmup take 1 ms; then 1, 2, 3, 4 ms
    clock = FakeClock(monkeypatch, [1.0] * 7 + [1.0, 2.0, 3.0, 4.0])
    result = do_bench(clock.fn, _n_warmup=1, _n_repeat=4, return_mode=mode, device="cpu")
    assert result == pytest.approx(expected)


def test_do_bench_quantiles(monkeypatch):
    durations = [1.0] * 7 + [1.0, 2.0, 3.0, 4.0, 5.0]
    clock = FakeClock(monkeypatch, durations)
    assert do_bench(clock.fn, _n_warmup=1, _n_repeat=5, quantiles=[0.5], device="cpu") == \
        pytest.approx(3.0)
    clock = FakeClock(monkeypatch, durations)
    assert do_bench(clock.fn, _n_warmup=1, _n_repeat=5, quantiles=[0.0, 0.25, 1.0],
                    device="cpu") == pytest.approx([1.0, 2.0, 5.0])


@pytest.mark.parametrize("backend", ["event", "cupti", "cudagraph"])
def test_every_backend_takes_the_wall_clock_on_the_cpu(monkeypatch, backend):
    clock = FakeClock(monkeypatch, [3.0])
    assert do_bench(clock.fn, backend=backend, _n_warmup=1, _n_repeat=2, device="cpu") == \
        pytest.approx(3.0)


def test_do_bench_times_real_work_on_the_cpu():
    import time

    assert 2.0 <= do_bench(lambda: time.sleep(0.002), _n_warmup=1, _n_repeat=3, device="cpu") < 200


@pytest.mark.parametrize("argument, value", [("backend", "nvtx"), ("return_mode", "average")])
def test_do_bench_refuses_unknown_choices(argument, value):
    with pytest.raises(ValueError, match=f"{argument} '{value}' is not one of"):
        do_bench(lambda: None, device="cpu", **{argument: value})


def test_do_bench_is_tilelangs_name():
    import tilec.profiler

    assert tilec.profiler.do_bench is do_bench is bench.do_bench


# --- the Profiler of a kernel -----------------------------------------------------------------

def _add_factory(target):
    @tilec.jit(out_idx=[-1], target=target)
    def add(M, N, dtype="float32"):
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype),
                 C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
                for i, j in T.Parallel(32, N):
                    C[bx * 32 + i, j] = A[bx * 32 + i, j] + B[bx * 32 + i, j]

        return main

    return add


add_on_cpu = _add_factory("cpu")


@tilec.jit(out_idx=[1], target="cpu")
def double_rows(dtype="float32"):
    n = T.symbolic("n")

    @T.prim_func
    def main(X: T.Tensor((n, 8), dtype), Y: T.Tensor((n, 8), dtype)):
        with T.Kernel(n, threads=8) as bx:
            for j in T.Parallel(8):
                Y[bx, j] = X[bx, j] * 2

    return main


def _array_library():
    try:
        import torch  # noqa: F401
    except ImportError:
        return "numpy"
    return "torch"


def test_get_profiler_supplies_the_inputs_but_not_the_outputs():
    profiler = add_on_cpu(64, 16).get_profiler(tensor_supply_type=TensorSupplyType.Normal)
    inputs = profiler._get_inputs()
    assert len(inputs) == 2
    for tensor in inputs:
        assert type(tensor).__module__.split(".")[0] == _array_library()
        assert tuple(tensor.shape) == (64, 16) and "float32" in str(tensor.dtype)
    assert len(profiler._get_inputs(with_output=True)) == 3
    assert profiler.func is profiler.kernel


def test_get_profiler_defaults_to_auto():
    assert add_on_cpu(32, 8).get_profiler().supply_type is TensorSupplyType.Auto
    assert tilec.TensorSupplyType is TensorSupplyType


def test_assert_allclose_passes_against_a_right_reference():
    add_on_cpu(64, 16).get_profiler().assert_allclose(lambda a, b: a + b, atol=1e-6, rtol=1e-6)


def test_assert_allclose_fails_against_a_wrong_reference():
    profiler = add_on_cpu(64, 16).get_profiler(TensorSupplyType.Randn)
    with pytest.raises(AssertionError, match=r"Too many mismatched elements(.|\n)*\ntilec: "
                                             r"(.|\n)*\nref: "):
        profiler.assert_allclose(lambda a, b: a - b)


def test_assert_allclose_allows_max_mismatched_ratio():
    profiler = add_on_cpu(32, 32).get_profiler(TensorSupplyType.One)

    def one_element_off(a, b):
        result = a + b
        result[3, 4] = 100
        return result

    profiler.assert_allclose(one_element_off, max_mismatched_ratio=0.01)  # 1 of 1024 allowed
    with pytest.raises(AssertionError, match="1 > 0"):
        profiler.assert_allclose(one_element_off, max_mismatched_ratio=0.0)


def test_assert_allclose_compares_the_given_inputs():
    profiler = add_on_cpu(32, 8).get_profiler()
    seen = []
    inputs = profiler._get_inputs()
    profiler.assert_allclose(lambda a, b: seen.append((a, b)) or a + b, input_tensors=inputs)
    assert seen[0][0] is inputs[0] and seen[0][1] is inputs[1]


def test_assert_allclose_counts_the_outputs():
    profiler = add_on_cpu(32, 8).get_profiler()
    with pytest.raises(AssertionError, match="returned 1 outputs and the reference program 2"):
        profiler.assert_allclose(lambda a, b: (a + b, a))


def test_assert_allclose_skips_an_output_the_reference_gives_as_none():
    add_on_cpu(32, 8).get_profiler().assert_allclose(lambda a, b: [None])


def test_run_once_returns_the_output():
    output = add_on_cpu(32, 8).get_profiler(TensorSupplyType.One).run_once()
    assert np.all(np.asarray(output) == 2)


def test_profiler_do_bench_times_the_kernel_or_func_on_the_inputs(monkeypatch):
    profiler = add_on_cpu(32, 8).get_profiler()
    assert profiler.do_bench(n_warmup=1, n_repeat=2) > 0
    calls = []
    profiler.do_bench(lambda a, b: calls.append((a.shape, b.shape)), n_warmup=2, n_repeat=3)
    assert calls == [((32, 8), (32, 8))] * (1 + 5 + 2 + 3)


def test_a_symbolic_dim_needs_its_value():
    profiler = double_rows().get_profiler()
    with pytest.raises(ValueError, match="parameter 'X' has the symbolic dim 'n'"):
        profiler.run_once()
    inputs = profiler._get_inputs(dynamic_symbolic_constraints={"n": 5})
    assert tuple(inputs[0].shape) == (5, 8)
    assert profiler.do_bench(n_warmup=1, n_repeat=1, dynamic_symbolic_constraints={"n": 5}) > 0


# --- on a GPU ---------------------------------------------------------------------------------

def test_cupti_timing_that_records_no_kernel_is_an_error():
    """torch's profiler records nothing while another tool holds CUPTI: that is an error, not a
    time of 0 ms."""
    class Profile:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def events(self):
            return []

    fake_torch = types.SimpleNamespace(
        profiler=types.SimpleNamespace(
            ProfilerActivity=types.SimpleNamespace(CPU="cpu", CUDA="cuda"),
            profile=lambda activities: Profile(),
            record_function=lambda name: Profile()),
        cuda=types.SimpleNamespace(device=lambda index: Profile(), synchronize=lambda index: None))
    clock = object.__new__(bench._GpuClock)
    clock.torch, clock.device = fake_torch, 0
    clock.cache = types.SimpleNamespace(zero_=lambda: None)
    with pytest.raises(RuntimeError, match="recorded no GPU kernels.*backend=\"event\""):
        clock.kernel_time(lambda: None, 3)


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
class TestOnGpu:
    @pytest.fixture
    def torch(self):
        return pytest.importorskip("torch")

    def test_inputs_are_on_the_gpu(self, torch):
        profiler = _add_factory("cuda")(256, 64).get_profiler(TensorSupplyType.Randn)
        inputs = profiler._get_inputs()
        assert all(t.is_cuda and t.dtype == torch.float32 for t in inputs)
        profiler.assert_allclose(lambda a, b: a + b, atol=1e-6, rtol=1e-6)

    @pytest.mark.parametrize("backend", ["event", "cupti", "cudagraph"])
    def test_do_bench_backends(self, torch, backend):
        if backend == "cupti" and os.environ.get("TILEC_UNDER_SANITIZER"):
            pytest.skip("compute-sanitizer holds CUPTI (bench/sanitize.sh sets TILEC_UNDER_SANITIZER)")
        profiler = _add_factory("cuda")(1024, 256).get_profiler()
        assert 0 < profiler.do_bench(backend=backend, warmup=5, rep=20) < 100

    def test_do_bench_quantiles_on_events(self, torch):
        x = torch.randn(1 << 20, device="cuda")
        low, high = do_bench(lambda: x * 2, quantiles=[0.1, 0.9], warmup=5, rep=20)
        assert 0 < low <= high
