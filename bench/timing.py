"""CUDA-event timing the benchmarks share."""

import contextlib
import statistics

import torch


def time_ms(fn, warmup=5, reps=20):
    """The median of `reps` CUDA-event timings of fn() in milliseconds, after `warmup` calls.
    The calls are queued back to back and synchronized once, as in a stream of work: a call's
    host cost (Python, argument checks, the launch) is in its time only where the host falls
    behind the GPU. Synchronizing after each call put it in every time, which counted tilec's
    ~100 us against cuDNN's ~65 us on a 4 ms kernel (bench/RESULTS.md, twenty-third session)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


def interleaved_ms(calls, rounds, warmup=2, reps=10, contexts=None):
    """Each of `calls` (name: fn) timed once a round by time_ms, for `rounds` rounds: the GPU's
    clocks drift within a run by more than many of the differences measured, so each side gets
    a time from every part of the run. contexts (name: a function making a context manager,
    torch's sdpa_kernel for one) is entered around a side's timing, not inside its calls, where
    its cost would count whenever the host fell behind. Returns name: the list of its rounds' times in ms."""
    contexts = contexts or {}
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            with contexts.get(name, contextlib.nullcontext)():
                times[name].append(time_ms(fn, warmup=warmup, reps=reps))
    return times
