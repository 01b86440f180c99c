"""Processes that share one kernel cache (the ranks of a torch.distributed job) build each kernel
once: the first to miss builds it under the entry's lock, the others wait and read it from disk.
Each process's results are right, and nothing in the cache is left damaged."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

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


def nvrtc_missing_reason():
    import tilec
    import tilec.language as T

    @T.prim_func
    def probe(A: T.Tensor((1,), "float32")):
        with T.Kernel(1) as bx:
            A[0] = 1.0

    try:
        tilec.compile(probe, target="cuda", arch="sm_90a")
    except RuntimeError as e:
        if str(e).startswith("cannot compile CUDA kernels:"):
            return str(e)
        raise
    return None


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_processes_sharing_a_cache_build_each_kernel_once(tmp_path, target):
    if target == "cuda" and nvrtc_missing_reason():
        pytest.skip(nvrtc_missing_reason())
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    go = tmp_path / "go"
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_LOG_LEVEL="debug",
               PYTHONPATH=os.pathsep.join(sys.path))
    workers = [subprocess.Popen([sys.executable, str(worker), str(go), target], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    time.sleep(1.0)  # past their imports
    go.touch()
    logs = []
    for process in workers:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0 and out.strip() == "ok", err
        logs.append(err)
    module = f"{target} module "
    built = [line for log in logs for line in log.splitlines() if module in line and ": built " in line]
    from_disk = [line for log in logs for line in log.splitlines() if module in line and ": from disk " in line]
    assert len(built) == 1, "\n".join(built)
    assert len(from_disk) == PROCESSES - 1, "\n".join(logs)
    assert not any("building without" in log or "WARNING" in log for log in logs), "\n".join(logs)
