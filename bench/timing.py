"""CUDA-event timing the benchmarks share."""

import statistics

import torch


def time_ms(fn, warmup=5, reps=20):
    """The median of `reps` CUDA-event timings of fn() in milliseconds, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
