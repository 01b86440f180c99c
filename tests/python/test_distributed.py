"""tilec inside torch.distributed jobs: the examples under examples/distributed/ run under
torchrun, on the CPU through gloo (here, in CI) and on GPUs through NCCL where a node has two.
The ranks share one kernel cache and build each kernel once; the context-parallel DSA prefill
gives every rank the rows the one-device step gives."""

import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from tilec import _core

torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402

if not torch.distributed.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "distributed"
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
SMALL_DSA = ["--index-heads", "16", "--index-dim", "32", "--heads", "16", "--d-qk", "96", "--d-v", "64",
             "--topk", "24", "--chunk", "32", "--repeat", "1"]


def torchrun(script, ranks, *args, cache):
    """(stdout, stderr) of `script` run by torchrun on `ranks` processes sharing the kernel cache
    `cache`, with tilec's debug log; fails the test when a rank fails."""
    env = dict(os.environ, **MULTICAST_OFF, TILEC_CACHE_DIR=str(cache), TILEC_LOG_LEVEL="debug",
               PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    launcher = shutil.which("torchrun", path=os.path.dirname(sys.executable)) or shutil.which("torchrun")
    command = [sys.executable, "-m", "torch.distributed.run"] if launcher is None else [launcher]
    done = subprocess.run([*command, "--standalone", f"--nproc-per-node={ranks}", str(EXAMPLES / script), *args],
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-6000:]
    return done.stdout, done.stderr


def builds_per_module(log):
    """How many times each module (CPU library or cubin) was built, by its key."""
    return collections.Counter(re.findall(r"(?:cpu|cuda) module ([0-9a-f]{16}): built ", log))


def rank_lines(stdout, ranks):
    lines = sorted(line for line in stdout.splitlines() if line.startswith("rank "))
    assert [line.split()[1] for line in lines] == [f"{r}/{ranks}" for r in range(ranks)], stdout
    return lines


def test_row_parallel_matmul_on_cpu_ranks_builds_its_kernel_once(tmp_path):
    stdout, stderr = torchrun("row_parallel_matmul.py", 2, "--device", "cpu", cache=tmp_path / "cache")
    assert all(line.endswith(": ok") for line in rank_lines(stdout, 2)), stdout
    builds = builds_per_module(stderr)
    assert builds and set(builds.values()) == {1}, builds


@pytest.mark.parametrize("ranks,tokens", [(2, 200), (3, 211)])
def test_context_parallel_dsa_prefill_on_cpu_ranks_matches_one_device(tmp_path, ranks, tokens):
    # 211 tokens over 3 ranks: six chunks of 35 and 36, shards of 71, 70 and 70 tokens
    stdout, stderr = torchrun("dsa_context_parallel.py", ranks, "--device", "cpu", "--tokens", str(tokens),
                              *SMALL_DSA, cache=tmp_path / "cache")
    lines = rank_lines(stdout, ranks)
    assert all(line.endswith("0 rows of other indices: ok") for line in lines), stdout
    assert sum(int(re.search(r": (\d+) of", line).group(1)) for line in lines) == tokens
    builds = builds_per_module(stderr)
    assert builds and set(builds.values()) == {1}, builds


def test_context_parallel_chunks_cover_the_sequence_once():
    sys.path.insert(0, str(EXAMPLES))
    try:
        from dsa_context_parallel import zigzag_chunks
    finally:
        sys.path.remove(str(EXAMPLES))
    for tokens, world in [(8, 1), (8192, 2), (211, 3), (131072, 8)]:
        chunks = zigzag_chunks(tokens, world)
        covered = sorted(span for spans in chunks for span in spans)
        assert covered[0][0] == 0 and covered[-1][1] == tokens
        assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
        # causal work (the keys each query sees) is the same on every rank, up to the rounding of
        # the chunks' bounds; cut into `world` runs it would differ 2 * world - 1 fold
        work = [sum((end * (end + 1) - begin * (begin + 1)) // 2 for begin, end in spans) for spans in chunks]
        assert max(work) / min(work) < 1.03, (tokens, world, work)

@pytest.mark.gpu
@pytest.mark.parametrize("script,args", [("row_parallel_matmul.py", []),
                                         ("dsa_context_parallel.py", ["--tokens", "4096"])])
def test_on_two_gpus_through_nccl(tmp_path, script, args):
    if not _core.cuda_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    stdout, _ = torchrun(script, 2, "--device", "cuda", *args, cache=tmp_path / "cache")
    assert all(line.endswith("ok") for line in rank_lines(stdout, 2)), stdout


def test_the_context_parallel_bench_runs_on_cpu_ranks(tmp_path):
    results = tmp_path / "RESULTS.md"
    bench = pathlib.Path(__file__).resolve().parents[2] / "bench" / "dsa_context_parallel.py"
    done = subprocess.run([sys.executable, str(bench), "--device", "cpu", "--tokens", "120", "--append", str(results),
                           *SMALL_DSA], env=dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"),
                                                 PYTHONPATH=os.pathsep.join(sys.path)),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    rows = [line for line in results.read_text().splitlines() if line.startswith("| 120 |")]
    assert [row.split("|")[2].strip() for row in rows] == ["1", "2"], results.read_text()
    assert rows[0].split("|")[4].strip() == "1.00x"


@pytest.mark.parametrize("args,env,message", [
    ([str(EXAMPLES / "row_parallel_matmul.py")], {}, "run this under torchrun, e.g. torchrun --standalone "
                                                     "--nproc-per-node 2 row_parallel_matmul.py"),
    ([str(EXAMPLES / "row_parallel_matmul.py"), "--device", "tpu"],
     {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"},
     "--device must be auto, cuda or cpu, not 'tpu'"),
    ([str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "dsa_context_parallel.py"), "--ranks", "1"], {},
     "--ranks must be at least 2"),
])
def test_misuse_of_the_distributed_scripts_says_what_is_wrong(args, env, message):
    done = subprocess.run([sys.executable, *args], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **env),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and message in done.stderr, done.stderr[-2000:]
