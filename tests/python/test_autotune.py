"""tilec.autotune and tilec.autotuner.AutoTuner: TileLang's autotuner surface.

The kernels run on the CPU backend (a few on a GPU, marked gpu). The kernel
here scales A by `factor` into B; `reps` adds a serial loop per element whose
result is multiplied by zero, so a config with reps in the tens of thousands is
clearly slower and computes the same.
"""

import io
import logging
import os
import pathlib
import shutil
import sys
import threading
import time

import numpy as np
import pytest

import tilec
import tilec.language as T
from tilec import _core
from tilec.autotuner import AutoTuner, autotune, set_autotune_inputs

N = 4096
SLOW = 20000


factory_hook = None  # a test's function, called with block on each run of scale_factory


def scale_factory(n, block=64, reps=0, factor=2.0):
    if factory_hook is not None:
        factory_hook(block)

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block)) as bx:
            for i in T.Parallel(block):
                acc = 0.0
                for r in T.serial(reps):
                    acc = acc * 0.5 + A[(bx * block + i + r) % n]
                B[bx * block + i] = A[bx * block + i] * factor + acc * 0.0

    return main


def doubled(A):
    return A * 2


def tuned(configs, target="cpu", **settings):
    """A fresh @autotune over @jit of scale_factory."""
    settings = {"warmup": 1, "rep": 3, **settings}
    return autotune(configs=configs, **settings)(
        tilec.jit(out_idx=[-1], target=target)(scale_factory))


class LogRecords(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())

    def text(self):
        return "\n".join(self.messages)


@pytest.fixture
def tilec_log():
    """The tilec logger's messages at INFO and above (it doesn't propagate
    once set_log_level has run, so caplog can't see it)."""
    logger = logging.getLogger("tilec")
    handler, level = LogRecords(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


@pytest.fixture(autouse=True)
def private_cache(monkeypatch):
    """The session's cache folder (conftest's) without tuning results before
    and after each test (its compiled kernels stay), the autotuner's switches
    unset."""
    for name in ("TILEC_AUTOTUNE_DISABLE_CACHE", "TILELANG_AUTO_TUNING_DISABLE_CACHE",
                 "TILELANG_DISABLE_CACHE", "TILEC_AUTOTUNE_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    folder = pathlib.Path(os.environ["TILEC_CACHE_DIR"]).resolve()
    shutil.rmtree(folder / "autotuner", ignore_errors=True)
    yield folder
    shutil.rmtree(folder / "autotuner", ignore_errors=True)


def check_doubles(kernel):
    a = np.random.default_rng().random(N, dtype=np.float32) + 0.5
    np.testing.assert_allclose(kernel(a), 2 * a, rtol=1e-6)


# --- picking the fastest ---------------------------------------------------------------

@pytest.mark.parametrize("fast_position", [0, 1, 2])
def test_picks_the_fastest_config(fast_position):
    configs = [{"block": 64, "reps": SLOW}, {"block": 128, "reps": SLOW}]
    configs.insert(fast_position, {"block": 64, "reps": 0})
    kernel = tuned(configs)(N)
    assert kernel.config == {"block": 64, "reps": 0}
    assert kernel.latency > 0
    check_doubles(kernel)


def test_early_stop_still_picks_the_fastest():
    configs = [{"reps": 0}, {"reps": SLOW}, {"reps": 2 * SLOW}]
    kernel = tuned(configs, rep=10, early_stop=True, early_stop_factor=1.5)(N)
    assert kernel.config == {"reps": 0}


def test_early_stop_factor_below_one_is_refused():
    with pytest.raises(ValueError, match="early_stop_factor must be at least 1.0, got 0.5"):
        tuned([{"reps": 0}], early_stop=True, early_stop_factor=0.5)(N)


# --- failing configs -------------------------------------------------------------------

CHECK_SLEEP = 20  # s: far above what compiling and timing both configs take on a busy machine
check_released = threading.Event()  # ends the sleep of an abandoned check, once the test is done


def sleeps_on_tripled(outputs, expected):
    """A check that hangs (sleeps) for the config that triples."""
    if np.allclose(outputs[0], 3 * expected[0] / 2):
        check_released.wait(CHECK_SLEEP)


def test_failing_configs_are_skipped_with_their_reasons(tilec_log):
    configs = [
        {"block": 64, "factor": 3.0},   # mismatches ref_prog
        {"block": "64"},                 # a str where an int extent is needed: compile error
        {"block": 32, "factor": 2.0},    # the one that passes
        {"block": 0},                    # a zero-sized block: compile error
    ]
    kernel = tuned(configs, ref_prog=doubled)(N)
    assert kernel.config == {"block": 32, "factor": 2.0}
    log = tilec_log.text()
    assert "config 0 {'block': 64, 'factor': 3.0} skipped: mismatch: output 0:" in log
    assert "elements differ beyond rtol=0.01, atol=0.01" in log
    assert "config 1 skipped: compile: " in log
    assert "config 3 skipped: compile: " in log
    assert "autotune of scale_factory: 3 of 4 configs skipped" in log


def test_config_past_its_timeout_is_skipped(tilec_log):
    configs = [{"factor": 3.0}, {"factor": 2.0}]
    start = time.perf_counter()
    check_released.clear()
    try:
        kernel = tuned(configs, ref_prog=doubled, manual_check_prog=sleeps_on_tripled,
                       timeout=0.5)(N)
    finally:
        check_released.set()
    assert time.perf_counter() - start < CHECK_SLEEP / 2  # the sleeping check was not waited for
    assert kernel.config == {"factor": 2.0}
    assert "config 0 {'factor': 3.0} skipped: run: timed out after 0.5 s" in tilec_log.text()


def test_every_config_failing_is_an_error_listing_each_reason():
    configs = [{"factor": 3.0}, {"block": "64"}]
    with pytest.raises(RuntimeError) as error:
        tuned(configs, ref_prog=doubled)(N)
    text = str(error.value)
    assert text.startswith("autotune of scale_factory: none of the 2 configs compiled, ran and "
                           "passed its check:\n")
    assert "\n  config 0 {'factor': 3.0}: mismatch: output 0: " in text
    assert "\n  config 1 {'block': '64'}: compile: " in text


@pytest.fixture
def hook(monkeypatch):
    """hook(f): f(block) runs on each run of scale_factory."""
    return lambda function: monkeypatch.setattr(sys.modules[__name__], "factory_hook", function)


def refuses_large_blocks(block):
    if block > 64:
        raise ValueError(f"block {block} is too large")


def test_a_factory_that_raises_is_a_compile_failure(hook):
    hook(refuses_large_blocks)
    kernel = tuned([{"block": 128}, {"block": 64}])(N)
    assert kernel.config == {"block": 64}
    with pytest.raises(RuntimeError, match=r"config 0 \{'block': 128\}: compile: ValueError: "
                                           r"block 128 is too large"):
        tuned([{"block": 128}])(N)


def test_config_naming_no_parameter_is_refused():
    with pytest.raises(ValueError, match=r"config 1 names 'blok', which is not a parameter of "
                                         r"scale_factory\(n, block, reps, factor\)"):
        tuned([{"block": 64}, {"blok": 64}])(N)


def test_no_configs_is_refused():
    with pytest.raises(ValueError, match="autotune of scale_factory: no configs to tune"):
        tuned([])(N)


def test_autotuner_tunes_functions_only():
    kernel = tilec.jit(out_idx=[-1], target="cpu")(scale_factory)(N)
    with pytest.raises(TypeError, match="AutoTuner tunes a function of the tuned arguments .* "
                                        "not a Kernel"):
        AutoTuner.from_kernel(kernel=kernel, configs=[{"block": 64}])
    with pytest.raises(TypeError, match="tilec.autotune goes over a jit function .* not a "
                                        "PrimFunc"):
        autotune(configs=[{"block": 64}])(scale_factory(N))


def test_autotune_needs_its_configs_by_name():
    with pytest.raises(TypeError, match="takes its configs by name"):
        autotune(tilec.jit(scale_factory), configs=[{"block": 64}])
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'configs'"):
        autotune()


# --- compiling in parallel -------------------------------------------------------------

def test_configs_compile_at_once_on_worker_threads(monkeypatch, hook):
    # Each factory waits for the other at the barrier: run one after the other, both would
    # time out there and fail.
    monkeypatch.setenv("TILEC_AUTOTUNE_WORKERS", "2")
    barrier = threading.Barrier(2, timeout=10)
    threads = set()

    def meet(block):
        threads.add(threading.current_thread().name)
        barrier.wait()

    hook(meet)
    kernel = tuned([{"block": 32}, {"block": 64}])(N)
    assert kernel.config in ({"block": 32}, {"block": 64})
    assert len(threads) == 2 and all(name.startswith("tilec-autotune") for name in threads)


def test_one_worker_compiles_one_config_at_a_time(monkeypatch, hook):
    monkeypatch.setenv("TILEC_AUTOTUNE_WORKERS", "1")
    running, most = [0], [0]
    lock = threading.Lock()

    def count(block):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    hook(count)
    tuned([{"block": 16}, {"block": 32}, {"block": 64}])(N)
    assert most[0] == 1


def test_bad_worker_count_is_refused(monkeypatch):
    monkeypatch.setenv("TILEC_AUTOTUNE_WORKERS", "0")
    with pytest.raises(ValueError, match="TILEC_AUTOTUNE_WORKERS='0': expected a positive"):
        tuned([{"block": 64}])(N)


# --- the disk cache --------------------------------------------------------------------

class CountingReference:
    """ref_prog that counts its calls: a tuning calls it, a cache hit doesn't."""

    calls = 0


def counted_doubled(A):
    CountingReference.calls += 1
    return A * 2


CACHED_CONFIGS = [{"block": 64, "reps": SLOW}, {"block": 32, "reps": 0}]


def test_second_run_takes_the_best_config_from_the_cache(private_cache, tilec_log):
    first = tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N)
    calls = CountingReference.calls
    assert calls > 0 and first.config == {"block": 32, "reps": 0}
    records = [p.name for p in (private_cache / "autotuner").iterdir()]
    assert len(records) == 2  # the record and its hash

    second = tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N)  # a fresh decorator: no memo
    assert CountingReference.calls == calls  # not benchmarked again
    assert second.config == first.config and second.latency == first.latency
    assert second.ref_latency == first.ref_latency
    check_doubles(second)
    assert ("autotune of scale_factory: best config {'block': 32, 'reps': 0} "
            f"({first.latency:.4f} ms) from the cache in {private_cache}/autotuner; not "
            "benchmarking") in tilec_log.text()


def test_cache_key_changes_with_the_arguments_and_configs():
    tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N)
    calls = CountingReference.calls
    tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N // 2)
    assert CountingReference.calls > calls
    calls = CountingReference.calls
    tuned(CACHED_CONFIGS + [{"block": 16}], ref_prog=counted_doubled)(N)
    assert CountingReference.calls > calls


@pytest.mark.parametrize("switch", ["TILEC_AUTOTUNE_DISABLE_CACHE",
                                    "TILELANG_AUTO_TUNING_DISABLE_CACHE",
                                    "TILELANG_DISABLE_CACHE", "disk_cache=False"])
def test_cache_off(switch, monkeypatch, private_cache):
    settings = {}
    if switch.startswith("disk_cache"):
        settings["disk_cache"] = False
    else:
        monkeypatch.setenv(switch, "1")
    tuned(CACHED_CONFIGS, ref_prog=counted_doubled, **settings)(N)
    calls = CountingReference.calls
    tuned(CACHED_CONFIGS, ref_prog=counted_doubled, **settings)(N)
    assert CountingReference.calls > calls
    assert not (private_cache / "autotuner").exists()


def test_damaged_record_is_tuned_again(private_cache):
    tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N)
    record = next(p for p in (private_cache / "autotuner").iterdir() if p.suffix != ".sha256")
    record.write_text(record.read_text().replace('"index": 1', '"index": 0'))
    calls = CountingReference.calls
    kernel = tuned(CACHED_CONFIGS, ref_prog=counted_doubled)(N)
    assert CountingReference.calls > calls and kernel.config == {"block": 32, "reps": 0}


class Opaque:
    def __call__(self, block):
        pass


def test_unkeyable_function_is_tuned_without_the_cache(private_cache, hook):
    hook(Opaque())  # scale_factory now reads an object the key can't stand for
    tuned([{"block": 64}])(N)
    assert not (private_cache / "autotuner").exists()


# --- tuned arguments given: no tuning --------------------------------------------------

def test_explicit_tuned_arguments_skip_tuning(tilec_log, hook):
    made = []
    hook(made.append)
    function = tuned([{"block": 32}, {"block": 64}])
    kernel = function(N, block=128)
    assert made == [128] and kernel.latency is None and kernel.config is None
    assert function(N, 16) is not None and made == [128, 16]  # by position too
    check_doubles(kernel)
    assert ("autotune of scale_factory: the call gives block; compiling it without tuning"
            in tilec_log.text())


def test_same_arguments_tune_once(hook):
    made = []
    hook(made.append)
    function = tuned([{"block": 32}, {"block": 64}])
    first = function(N)
    assert sorted(made) == [32, 64]
    assert function(N) is first and function(n=N) is first and sorted(made) == [32, 64]


def test_do_not_specialize_shares_one_tuning(hook):
    made = []
    hook(made.append)
    function = tuned([{"block": 32}, {"block": 64}], do_not_specialize=["factor"])
    assert function(N, factor=2.0) is function(N, factor=3.0)
    assert len(made) == 2


# --- the examples' call patterns -------------------------------------------------------

def make_closure_factory(n):
    """A factory closing over its shape, tunables defaulting to None (the
    AutoTuner.from_kernel pattern)."""

    def kernel(block=None, reps=None):
        @T.prim_func
        def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(T.ceildiv(n, block)) as bx:
                for i in T.Parallel(block):
                    acc = 0.0
                    for r in T.serial(reps):
                        acc = acc * 0.5 + A[(bx * block + i + r) % n]
                    B[bx * block + i] = A[bx * block + i] * 2.0 + acc * 0.0

        return main

    return kernel


def test_from_kernel_set_compile_and_profile_args_run():
    configs = [{"block": 64, "reps": SLOW}, {"block": 128, "reps": 0}]
    result = (AutoTuner.from_kernel(kernel=make_closure_factory(N), configs=configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(supply_type="Auto", ref_prog=doubled, skip_check=False,
                                rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.0)
              .run(warmup=1, rep=3))
    assert result.config == {"block": 128, "reps": 0}
    assert result.latency > 0 and result.ref_latency > 0
    assert result.kernel.config == result.config and result.kernel.latency == result.latency
    assert result.libcode == result.kernel.get_kernel_source() and "extern" in result.libcode
    check_doubles(result.kernel)


def test_from_kernel_of_a_jit_function_keeps_its_compile_args():
    jitted = tilec.jit(out_idx=[-1], target="cpu")(scale_factory)
    tuner = AutoTuner.from_kernel(kernel=jitted, configs=[{"n": N, "block": 64}])
    result = tuner.run(warmup=1, rep=1)
    check_doubles(result.kernel)
    assert result.kernel.target == "cpu"


def test_compile_args_of_tilelangs_target_dict():
    result = (AutoTuner.from_kernel(make_closure_factory(N), [{"block": 64, "reps": 0}])
              .set_compile_args(out_idx=-1, target={"kind": "cpu"}, execution_backend="auto",
                                verbose=False)
              .run(warmup=1, rep=1))
    assert result.kernel.target == "cpu"


def test_per_config_pass_configs():
    configs = [{"block": 64, "reps": 0, "pass_configs": {"tilec.bounds_check": flag}}
               for flag in (True, False)]
    result = (AutoTuner.from_kernel(make_closure_factory(N), configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .run(warmup=1, rep=2))
    assert result.config in configs
    bounds_checked = "tilec_rt::checked(" in result.kernel.get_kernel_source()
    assert bounds_checked == result.config["pass_configs"]["tilec.bounds_check"]


def test_configs_as_a_function_of_the_call():
    seen = []

    def configs(n, *rest, **named):
        seen.append((n, rest, named))
        return [{"block": b} for b in (32, 64) if n % b == 0]

    kernel = tuned(configs)(N, factor=2.0)
    assert seen == [(N, (), {"factor": 2.0})] and kernel.config in ({"block": 32}, {"block": 64})


def test_set_autotune_inputs_gives_the_inputs():
    a = np.full(N, 0.25, dtype=np.float32)
    seen = []

    def ref(A):
        seen.append(A)
        return A * 2

    with set_autotune_inputs(a):
        kernel = tuned([{"block": 32}, {"block": 64}], ref_prog=ref)(N)
    assert seen and all(x is a for x in seen)
    check_doubles(kernel)


def test_set_autotune_inputs_with_outputs_and_scalars():
    def factory(block=64):
        @T.prim_func
        def scaled(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), s: T.float32):
            with T.Kernel(T.ceildiv(N, block)) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = A[bx * block + i] * s

        return scaled

    a, b = np.ones(N, np.float32), np.zeros(N, np.float32)
    with set_autotune_inputs([a, b, 3.0]):
        result = (AutoTuner.from_kernel(factory, [{"block": 32}, {"block": 64}])
                  .set_compile_args(out_idx=[1], target="cpu")
                  .set_profile_args(ref_prog=lambda A, B, s: A * s)
                  .run(warmup=1, rep=1))
    assert result.config in ({"block": 32}, {"block": 64})
    np.testing.assert_array_equal(b, 3.0)


def test_scalar_input_without_given_inputs_fails_clearly():
    def factory(block=64):
        @T.prim_func
        def scaled(A: T.Tensor((N,), "float32"), s: T.float32):
            with T.Kernel(T.ceildiv(N, block)) as bx:
                for i in T.Parallel(block):
                    A[bx * block + i] = A[bx * block + i] * s

        return scaled

    with pytest.raises(RuntimeError, match="draws no value for the scalar param 's'; give the "
                                           r"inputs with set_autotune_inputs\(\.\.\.\)"):
        AutoTuner.from_kernel(factory, [{"block": 64}]).set_compile_args(target="cpu").run()


@autotune(configs=[{"block_M": 16}, {"block_M": 32}], warmup=1, rep=2)
@tilec.jit(target="cpu")
def eager_scale(A, block_M=16):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    B = T.empty((M,), "float32")
    with T.Kernel(T.ceildiv(M, block_M)) as bx:
        for i in T.Parallel(block_M):
            B[bx * block_M + i] = A[bx * block_M + i] * 2
    return B


def test_eager_kernel_tuned_through_compile_and_through_a_call():
    kernel = eager_scale.compile(M=N)  # the convolution example's call
    assert kernel.config in ({"block_M": 16}, {"block_M": 32})
    check_doubles(kernel)
    a = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(eager_scale(a), 2 * a)  # a call with tensors runs it
    assert eager_scale.compile(M=N, block_M=32).config is None  # given: no tuning


@tilec.jit(out_idx=[-1], target="cpu")
@autotune(configs=[{"block": 32}, {"block": 64}], warmup=1, rep=2)
def jit_over_autotune(n, block=64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block)) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2
    return main


def test_jit_over_autotune():
    kernel = jit_over_autotune(N)
    assert kernel.config in ({"block": 32}, {"block": 64}) and kernel.target == "cpu"
    check_doubles(kernel)


def test_star_import_gives_tilelangs_names():
    names = {}
    exec("from tilec.autotuner import *", names)
    assert {"autotune", "AutoTuner", "set_autotune_inputs", "get_autotune_inputs",
            "AutotuneResult"} <= set(names)
    assert tilec.autotune is autotune


# --- the progress bar ------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_counter_on_a_terminal_without_tqdm(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    tuned([{"block": 32}, {"block": 64}])(N)
    text = terminal.getvalue()
    assert "\rCompiling configurations: 0/2" in text and "\rCompiling configurations: 2/2\n" in text
    assert "\rBenchmarking configurations: 2/2\n" in text


def test_nothing_printed_off_a_terminal(capfd):
    tuned([{"block": 32}, {"block": 64}])(N)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# --- on a GPU --------------------------------------------------------------------------

@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.gpu
@pytest.mark.skipif(not _core.cuda_available(), reason="needs a CUDA GPU")
class TestOnGpu:
    def test_picks_the_fastest_config(self, torch):
        # 4096 dependent steps an element are about a millisecond over 2^20 elements, against
        # microseconds: plainly slower, yet done well within the tuner's timeout (200 * SLOW steps
        # ran for minutes on the H200, and the shard stalled behind the launches still queued).
        configs = [{"block": 128, "reps": 4096}, {"block": 128, "reps": 0}]
        kernel = tuned(configs, target="cuda", ref_prog=doubled)(1 << 20)
        assert kernel.config == {"block": 128, "reps": 0} and kernel.target == "cuda"
        a = torch.rand(1 << 20, device="cuda")
        torch.testing.assert_close(kernel(a), 2 * a)

    def test_from_kernel_with_torch_inputs(self, torch):
        a = torch.rand(N, device="cuda")
        with set_autotune_inputs(a):
            result = (AutoTuner.from_kernel(make_closure_factory(N),
                                            [{"block": 64, "reps": 0}, {"block": 128, "reps": 0}])
                      .set_compile_args(out_idx=[-1], target="cuda")
                      .set_profile_args(ref_prog=doubled)
                      .run(warmup=2, rep=5))
        assert result.ref_latency > 0
        torch.testing.assert_close(result.kernel(a), 2 * a)


# --- timing: the median batch decides ------------------------------------------------------

class SteppedClock:
    """time.perf_counter for time_per_run: each run takes the next of `durations_ms`."""

    def __init__(self, monkeypatch, durations_ms):
        self.now, self.durations, self.runs = 0.0, list(durations_ms), 0
        monkeypatch.setattr(tilec.autotuner.bench.time, "perf_counter", lambda: self.now)

    def run(self):
        self.now += self.durations[min(self.runs, len(self.durations) - 1)] * 1e-3
        self.runs += 1


def test_one_slow_batch_does_not_decide(monkeypatch):
    clock = SteppedClock(monkeypatch, [1.0, 1.0, 250.0, 1.0, 1.0])  # the third run was preempted
    latency = tilec.autotuner.bench.time_per_run(clock.run, "cpu", 0, 5, None)
    assert latency == pytest.approx(1.0)
    assert clock.runs == 5


def test_batches_split_the_runs(monkeypatch):
    clock = SteppedClock(monkeypatch, [2.0])
    assert tilec.autotuner.bench.time_per_run(clock.run, "cpu", 3, 12, None) == pytest.approx(2.0)
    assert clock.runs == 3 + 12


def test_early_stop_after_the_first_batch(monkeypatch):
    clock = SteppedClock(monkeypatch, [9.0])
    latency = tilec.autotuner.bench.time_per_run(clock.run, "cpu", 0, 50, None, early_stop_above=5.0)
    assert latency == pytest.approx(9.0)
    assert clock.runs == 10  # one batch of the five
