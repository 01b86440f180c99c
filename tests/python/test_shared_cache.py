"""Processes that share one kernel cache (the ranks of a torch.distributed job) build each kernel
once: the first to miss builds it under the entry's lock, the others wait and read it from disk.
Each process's results are right, and nothing in the cache is left damaged."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

import tilec
import tilec.language as T

from helpers import build_for_cuda

PROCESSES = 4

WORKER = textwrap.dedent('''
    import os, pathlib, sys, time
    import numpy as np
    import tilec
    import tilec.language as T

    @T.prim_func
    def axpy(X: T.Tensor((1000,), "float32"), Y: T.Tensor((1000,), "float32"),
             Z: T.Tensor((1000,), "float32")):
        with T.Kernel(T.ceildiv(1000, 128), threads=128) as bx:
            for i in T.Parallel(128):
                if bx * 128 + i < 1000:
                    Z[bx * 128 + i] = 2.5 * X[bx * 128 + i] + Y[bx * 128 + i]

    go = pathlib.Path(sys.argv[1])
    while not go.exists():  # every process starts compiling at once
        time.sleep(0.005)
    target = sys.argv[2]
    kernel = tilec.compile(axpy, target=target, arch="sm_90a" if target == "cuda" else "")
    if target == "cpu":
        rng = np.random.default_rng()
        x, y = (rng.uniform(0.1, 1, 1000).astype(np.float32) for _ in range(2))
        z = np.full(1000, np.nan, np.float32)
        kernel(x, y, z)
        np.testing.assert_allclose(z, 2.5 * x + y, rtol=1e-6)
    print("ok")
''')


@tilec.jit
def probe():
    @T.prim_func
    def main(A: T.Tensor((1,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    return main


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_processes_sharing_a_cache_build_each_kernel_once(tmp_path, target):
    if target == "cuda":
        build_for_cuda(probe, "sm_90a")  # skips where NVRTC can't be loaded
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    go = tmp_path / "go"
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_LOG_LEVEL="debug",
               PYTHONPATH=os.pathsep.join(sys.path))
    module = f"{target} module "

    def run(processes):
        started = [subprocess.Popen([sys.executable, str(worker), str(go), target], env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for _ in range(processes)]
        time.sleep(1.0)  # past their imports
        go.touch()
        logs = []
        for process in started:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0 and out.strip() == "ok", err
            logs.append(err)
        assert not any("building without" in log or "WARNING" in log for log in logs), "\n".join(logs)
        return ([line for log in logs for line in log.splitlines() if module in line and ": built " in line],
                [line for log in logs for line in log.splitlines() if module in line and ": from disk " in line])

    built, from_disk = run(PROCESSES)
    assert len(built) == 1, "\n".join(built)
    assert len(from_disk) == PROCESSES - 1, "\n".join(from_disk)
    built, from_disk = run(1)  # what they left is whole: a later process reads it and builds nothing
    assert not built and len(from_disk) == 1, (built, from_disk)
