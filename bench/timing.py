"""CUDA-event timing the benchmarks share."""

import contextlib
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


def interleaved_ms(calls, rounds, warmup=2, reps=10, contexts=None):
    """Each of `calls` (name: fn) timed once a round by time_ms, for `rounds` rounds: the GPU's
    clocks drift within a run by more than many of the differences measured, so each side gets
    a time from every part of the run. contexts (name: a function making a context manager,
    torch's sdpa_kernel for one) is entered around a side's timing, not inside its calls, whose
    launch overhead the timings include. Returns name: the list of its rounds' times in ms."""
    contexts = contexts or {}
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            with contexts.get(name, contextlib.nullcontext)():
                times[name].append(time_ms(fn, warmup=warmup, reps=reps))
    return times
