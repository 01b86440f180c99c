"""do_bench: how long a callable takes, in milliseconds (TileLang's tilelang.profiler.do_bench).

On a GPU it times with CUDA events (or CUPTI, or CUDA graph replays) through torch, clearing
the L2 cache before each run; on the CPU, with the wall clock (no cache clearing).
"""

import logging
import time

import numpy

log = logging.getLogger("tilec")

_BACKENDS = ("event", "cupti", "cudagraph")
_RETURN_MODES = ("min", "max", "mean", "median")
_CACHE_FLUSH = "tilec::cache_flush"  # the profiler range of the L2 cache clearing


def do_bench(fn, warmup=25, rep=100, _n_warmup=0, _n_repeat=0, quantiles=None, fast_flush=True,
             backend="event", return_mode="mean", device=None, cache_size=256):
    """The time of one call of `fn` (no arguments), in ms.

    fn runs once, then 5 times to estimate its time; then warmup ms of runs (or _n_warmup
    runs), then rep ms of timed runs (or _n_repeat), at least one each. Returns the runs'
    `return_mode` ("mean", "median", "min", "max"), or with `quantiles` ([0.5, 0.9]) those
    quantiles (one: a float). backend: "event" (CUDA events around each run), "cupti" (the
    kernels' own time from torch's profiler, averaged; quantiles and return_mode do not
    apply) or "cudagraph" (the runs captured in a CUDA graph, replayed). device: a CUDA device
    (int or torch.device) to time on, "cpu" for the wall clock; None takes the GPU where torch
    sees one, else the CPU. On the CPU every backend times with the wall clock. fast_flush and
    cache_size (MB) size the buffer cleared to evict the L2 cache."""
    if backend not in _BACKENDS:
        raise ValueError(f"do_bench: backend {backend!r} is not one of {', '.join(_BACKENDS)}")
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"do_bench: return_mode {return_mode!r} is not one of "
                         f"{', '.join(_RETURN_MODES)}")
    clock = _clock(device, fast_flush, cache_size)
    fn()
    clock.synchronize()
    estimate = max(clock.total(fn, 5) / 5, 1e-6)
    n_warmup = _n_warmup if _n_warmup > 0 else max(1, int(warmup / estimate))
    n_repeat = _n_repeat if _n_repeat > 0 else max(1, int(rep / estimate))
    log.debug("do_bench: %.4f ms a run estimated; %d warmup runs, %d timed (%s, %s)", estimate,
              n_warmup, n_repeat, backend, clock.name)
    for _ in range(n_warmup):
        fn()
    if backend == "cupti" and clock.gpu:
        return clock.kernel_time(fn, n_repeat)
    if backend == "cudagraph" and clock.gpu:
        times = clock.graph_times(fn, n_repeat)
    else:
        times = clock.each_time(fn, n_repeat)
    return _summary(times, quantiles, return_mode)


def _summary(times, quantiles, return_mode):
    times = numpy.asarray(times, dtype=numpy.float64)
    if quantiles is not None:
        values = [float(v) for v in numpy.quantile(times, quantiles)]
        return values[0] if len(values) == 1 else values
    return float(getattr(numpy, return_mode)(times))


def _clock(device, fast_flush, cache_size):
    """What times calls on `device`: the wall clock on the CPU, CUDA events on a GPU."""
    if device == "cpu" or (device is None and not _torch_sees_gpu()):
        return _WallClock()
    return _GpuClock(device, fast_flush, cache_size)


class _WallClock:
    name = "wall clock"
    gpu = False

    def synchronize(self):
        pass

    def total(self, fn, count):
        """The time of `count` calls, in ms."""
        start = time.perf_counter()
        for _ in range(count):
            fn()
        return (time.perf_counter() - start) * 1e3

    def each_time(self, fn, count):
        times = []
        for _ in range(count):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return times


class _GpuClock:
    name = "CUDA events"
    gpu = True

    def __init__(self, device, fast_flush, cache_size):
        import torch

        self.torch = torch
        if device is None:
            self.device = torch.cuda.current_device()
        elif isinstance(device, int):
            self.device = device
        else:
            device = torch.device(device)
            if device.type != "cuda":
                raise ValueError(f"do_bench: device {device} is neither a CUDA device nor \"cpu\"")
            self.device = torch.cuda.current_device() if device.index is None else device.index
        element = torch.int32 if fast_flush else torch.int8
        count = cache_size * 1024 * 1024 // (4 if fast_flush else 1)
        self.cache = torch.empty(count, dtype=element, device=torch.device("cuda", self.device))

    def synchronize(self):
        self.torch.cuda.synchronize(self.device)

    def _event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def total(self, fn, count):
        """The time of `count` calls, each after clearing the L2 cache, in ms."""
        with self.torch.cuda.device(self.device):
            start, end = self._event(), self._event()
            start.record()
            for _ in range(count):
                self.cache.zero_()
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)

    def each_time(self, fn, count):
        with self.torch.cuda.device(self.device):
            starts = [self._event() for _ in range(count)]
            ends = [self._event() for _ in range(count)]
            for start, end in zip(starts, ends):
                self.cache.zero_()
                start.record()
                fn()
                end.record()
            self.synchronize()
            return [start.elapsed_time(end) for start, end in zip(starts, ends)]

    def graph_times(self, fn, count, replays=10):
        """Each of `replays` replays of a graph of `count` calls, divided by `count`."""
        torch = self.torch
        with torch.cuda.device(self.device), torch.cuda.stream(torch.cuda.Stream()):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(count):
                    fn()
            self.synchronize()
            starts = [self._event() for _ in range(replays)]
            ends = [self._event() for _ in range(replays)]
            for start, end in zip(starts, ends):
                self.cache.zero_()
                start.record()
                graph.replay()
                end.record()
            self.synchronize()
            return [start.elapsed_time(end) / count for start, end in zip(starts, ends)]

    def kernel_time(self, fn, count):
        """The mean time of one call's GPU kernels, from CUPTI (torch.profiler), in ms; the
        cache clearing, marked as a profiler range, is left out."""
        profiler = self.torch.profiler
        # CPU activity too: the cache clearing's range reaches the GPU's timeline only with it.
        activities = [profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA]
        with self.torch.cuda.device(self.device):
            with profiler.profile(activities=activities) as profile:
                for _ in range(count):
                    with profiler.record_function(_CACHE_FLUSH):
                        self.cache.zero_()
                    fn()
                self.synchronize()
        total = flush = 0.0
        kernels = 0
        for event in profile.events():
            if getattr(getattr(event, "device_type", None), "name", "") != "CUDA":
                continue
            # self_cuda_time_total before torch 2.4 (deprecated since)
            microseconds = (event.self_device_time_total if hasattr(event, "self_device_time_total")
                            else event.self_cuda_time_total)
            if not getattr(event, "is_user_annotation", False):
                total += microseconds
                kernels += 1
            elif event.key == _CACHE_FLUSH:
                flush += microseconds
        if kernels == 0:
            # CUPTI takes one subscriber: under compute-sanitizer, Nsight or another profiler
            # torch's profiler records nothing.
            raise RuntimeError("do_bench(backend=\"cupti\"): the profiler recorded no GPU kernels; CUPTI "
                               "may be in use by another tool (compute-sanitizer, Nsight Systems); "
                               "time with backend=\"event\" instead")
        return (total - flush) / count * 1e-3


def _torch_sees_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()
