"""The `tilec` command line: compile a kernel file without Python running it."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEED_MATMUL = ROOT / "examples" / "seed_matmul.py"


def tilec(*args, env=None):
    command = [sys.executable, "-c", "import sys; from tilec._cli import main; sys.exit(main())", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("stage,marker", [
    ("tile-ir", "T.gemm(A_shared[0:32, 0:32], B_shared[0:32, 0:32], C_local[0:32, 0:32])"),
    ("ir", "C_local[i, j] = C_local[i, j] + A_shared[i, k_1] * B_shared[k_1, j]"),
    ("source", 'extern "C" void tilec_kernel_entry('),
])
def test_compile_emits_each_stage(stage, marker):
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=64", "-D", "N=64",
                 "-D", "K=64", "--target", "cpu", "--emit", stage)
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout


@pytest.mark.parametrize("stage,arch,marker", [
    ("source", None, "__global__"),
    ("ptx", "sm_80", ".target sm_80"),
    ("ptx", "sm_90a", ".target sm_90a"),
])
def test_compile_for_cuda_needs_no_gpu(stage, arch, marker):
    args = ["--arch", arch] if arch else []
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=64", "-D", "N=64",
                 "-D", "K=64", "--target", "cuda", *args, "--emit", stage)
    if "cannot compile CUDA kernels" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout


@pytest.mark.parametrize("args,message", [
    (["--arch", "sm_80"], "arch 'sm_80' is for target 'cuda', not 'cpu'"),
    (["--emit", "ptx"], "--emit ptx is for --target cuda"),
])
def test_cuda_options_without_target_cuda_are_usage_errors(args, message):
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", *args)
    assert done.returncode == 2
    assert message in done.stderr


@pytest.mark.parametrize("args,message", [
    (["--target", "gpu"], "tilec: unknown target 'gpu' (targets: cpu, cuda, hip)"),
    (["--target", "cuda", "--arch", "sm_75"],
     "tilec: unknown arch 'sm_75' for target 'cuda' (cuda arches: sm_80, sm_86, sm_89, sm_90, sm_90a)"),
    (["--target", "cuda", "--arch", "gfx90a"], "tilec: arch 'gfx90a' is for target 'hip', not 'cuda'"),
    (["--target", "hip"], "tilec: target 'hip' needs an arch (hip arches: gfx90a, gfx940, gfx906)"),
    (["--target", "hip", "--arch", "gfx1100"],
     "tilec: unknown arch 'gfx1100' for target 'hip' (hip arches: gfx90a, gfx940, gfx906)"),
])
def test_a_bad_target_or_arch_is_a_usage_error_naming_the_valid_ones(args, message):
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", *args)
    assert done.returncode == 2
    assert done.stderr.startswith(message), done.stderr
    assert done.stdout == ""


def test_emitted_stages_start_with_the_target():
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=64", "-D", "N=64",
                 "-D", "K=64", "--target", "cuda", "--arch", "sm_86", "--emit", "ir")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# target: cuda sm_86 (warp 32, smem 99 KiB, mma.f16 ")


def test_compile_error_exits_1_with_location_and_caret(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import tilec.language as T\n\n@T.prim_func\n"
                   "def main(A: T.Tensor((8,), \"float32\")):\n"
                   "    with T.Kernel(1) as bx:\n"
                   "        T.copyy(A, A)\n")
    done = tilec("compile", str(bad))
    assert done.returncode == 1
    assert f"{bad}:6:9: error: unknown primitive 'T.copyy'" in done.stderr
    assert "        T.copyy(A, A)" in done.stderr and "^" in done.stderr


KERNEL_WITH_ERROR_ON_LINE_6 = ("import tilec.language as T\n\n@T.prim_func\n"
                               "def main(A: T.Tensor((8,), \"float32\")):\n"
                               "    with T.Kernel(1) as bx:\n"
                               "        T.copyy(A, A)\n")


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_files_with_cr_or_crlf_line_ends_compile(tmp_path, newline):
    # A CR-only file read as one line: "has 0 jit/prim_func functions".
    good = tmp_path / "good.py"
    good.write_bytes(KERNEL_WITH_ERROR_ON_LINE_6.replace("T.copyy(A, A)", "A[0] = 1.0")
                     .replace("\n", newline).encode())
    done = tilec("compile", str(good), "--emit", "ir")
    assert done.returncode == 0, done.stderr
    assert "A[0] = 1.0" in done.stdout
    bad = tmp_path / "bad.py"
    bad.write_bytes(KERNEL_WITH_ERROR_ON_LINE_6.replace("\n", newline).encode())
    done = tilec("compile", str(bad))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{bad}:6:9: error: unknown primitive 'T.copyy'")
    assert "\n            T.copyy(A, A)\n            ^" in done.stderr


def test_a_nul_byte_is_an_error_printed_whole(tmp_path):
    # The message was cut off at the NUL, before the source line and the caret.
    bad = tmp_path / "nul.py"
    bad.write_bytes(KERNEL_WITH_ERROR_ON_LINE_6.replace("T.copyy(A, A)", "A[0] = 1.0  # \0").encode())
    done = tilec("compile", str(bad))
    assert done.returncode == 1
    assert done.stderr == (f"{bad}:6:23: error: source code cannot contain null bytes\n"
                           "            A[0] = 1.0  # \\x00\n"
                           + " " * (4 + 22) + "^\n")


def test_a_define_past_int64_is_an_error():
    # strtoll's saturated value used to become the constant silently.
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=99999999999999999999",
                 "-D", "N=64", "-D", "K=64", "--target", "cpu")
    assert done.returncode == 1
    assert "-D value 99999999999999999999 does not fit in 64 bits" in done.stderr


def test_usage_error_exits_2():
    done = tilec("compile")
    assert done.returncode == 2
    assert "usage" in (done.stderr + done.stdout).lower()


def test_dump_ir_prints_the_ir_after_every_pass():
    env = dict(os.environ, TILEC_DUMP_IR="1")
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=32", "-D", "N=32",
                 "-D", "K=32", "--emit", "ir", env=env)
    assert done.returncode == 0, done.stderr
    for name in ("verify", "lower_tile_ops", "simplify"):
        assert f"// after {name}" in done.stderr


@pytest.mark.parametrize("value,dumps", [("off", False), ("False", False), ("yes", True)])
def test_dump_ir_is_a_switch(value, dumps):
    env = dict(os.environ, TILEC_DUMP_IR=value)
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=32", "-D", "N=32",
                 "-D", "K=32", "--emit", "ir", env=env)
    assert done.returncode == 0, done.stderr
    assert ("// after verify" in done.stderr) == dumps


def test_time_passes_takes_only_switch_values():
    env = dict(os.environ, TILEC_TIME_PASSES="sometimes")
    done = tilec("compile", str(SEED_MATMUL), "--func", "matmul_kernel", "-D", "M=32", "-D", "N=32",
                 "-D", "K=32", "--emit", "ir", env=env)
    assert done.returncode == 1
    assert "TILEC_TIME_PASSES='sometimes' is not a switch" in done.stderr
