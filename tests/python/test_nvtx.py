"""NVTX ranges on request: with TILEC_NVTX=1 each compile stage and each launch is a range,
pushed and popped in pairs; without it tilec never touches NVTX. Most tests use a stand-in NVTX
library built by the test (found through TILEC_NVIDIA_LIB_DIRS) that writes each push and pop
to a file, so they need no profiler and no GPU. The last ones use NVIDIA's own libnvtx3interop
with a tool attached the way a profiler attaches (NVTX_INJECTION64_PATH): a library, built
here, that takes NVTX's push and pop callbacks and writes them down; on the CPU, and on a GPU
with a CUDA kernel."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

FAKE_NVTX = r"""
#include <stdio.h>
#include <stdlib.h>
static void note(const char* what) {
  FILE* log = fopen(getenv("FAKE_NVTX_LOG"), "a");
  if (log) { fputs(what, log); fputc('\n', log); fclose(log); }
}
int nvtxRangePushA(const char* message) {
  char line[512];
  snprintf(line, sizeof line, "push %s", message);
  note(line);
  return 0;
}
int nvtxRangePop(void) { note("pop"); return 0; }
"""

PROGRAM = textwrap.dedent("""
    import numpy as np
    import tilec
    import tilec.language as T

    TARGET = "{target}"

    @tilec.jit(out_idx=[-1], target=TARGET)
    def double(n):
        @T.prim_func
        def doubled(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    B[i] = A[i] * 2
        return doubled

    kernel = double(16)
    a = np.arange(16, dtype=np.float32) + 1
    if TARGET == "cuda":
        import torch
        a = torch.from_numpy(a).cuda()
    assert (kernel(a) == 2 * a).all()
    assert (kernel(a) == 2 * a).all()
""")


@pytest.fixture(scope="module")
def fake_nvtx(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("needs a C compiler to build the stand-in NVTX library")
    folder = tmp_path_factory.mktemp("fake_nvtx")
    (folder / "fake_nvtx.c").write_text(FAKE_NVTX)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(folder / "libnvtx3interop.so.1"),
                    str(folder / "fake_nvtx.c")], check=True)
    return folder


def run(fake_nvtx, tmp_path, **environment):
    log = tmp_path / "nvtx.log"
    env = dict(os.environ, TILEC_NVIDIA_LIB_DIRS=str(fake_nvtx), FAKE_NVTX_LOG=str(log),
               TILEC_CACHE_DIR=str(tmp_path / "cache"), **environment)
    program = tmp_path / "program.py"  # tilec reads a kernel's source from its file
    program.write_text(PROGRAM.format(target="cpu"))
    subprocess.run([sys.executable, str(program)], env=env, check=True, timeout=300)
    return log.read_text().splitlines() if log.exists() else []


def test_with_tilec_nvtx_each_stage_and_launch_is_a_range(fake_nvtx, tmp_path):
    lines = run(fake_nvtx, tmp_path, TILEC_NVTX="1")
    pushes = [line[len("push "):] for line in lines if line.startswith("push ")]
    assert "parse + elaborate 'doubled'" in pushes
    assert any(p.startswith("passes (cpu") for p in pushes)
    assert pushes.count("doubled") == 2  # one range a launch
    depth = 0
    for line in lines:
        depth += 1 if line.startswith("push ") else -1
        assert depth >= 0, "a pop without its push"
    assert depth == 0, "a push without its pop"


def test_without_tilec_nvtx_nothing_is_pushed(fake_nvtx, tmp_path):
    assert run(fake_nvtx, tmp_path) == []
    assert run(fake_nvtx, tmp_path, TILEC_NVTX="0") == []


def test_a_library_without_nvtx_s_functions_leaves_the_ranges_off_and_says_why(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("needs a C compiler to build the stand-in NVTX library")
    (tmp_path / "empty.c").write_text("int not_nvtx(void) { return 0; }\n")
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(tmp_path / "libnvtx3interop.so.1"),
                    str(tmp_path / "empty.c")], check=True)
    env = dict(os.environ, TILEC_NVIDIA_LIB_DIRS=str(tmp_path), TILEC_CACHE_DIR=str(tmp_path / "cache"))
    asked = subprocess.run([sys.executable, "-c", "import tilec\ntry:\n    tilec.set_nvtx(True)\n"
                            "except RuntimeError as e:\n    print(e)"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert asked.stdout.strip() == "tilec.set_nvtx: libnvtx3interop has no nvtxRangePushA or nvtxRangePop"
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(target="cpu"))
    ran = subprocess.run([sys.executable, str(program)], env=dict(env, TILEC_NVTX="1"), capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    warnings = [line for line in ran.stderr.splitlines() if "NVTX ranges were asked for but are off" in line]
    assert len(warnings) == 1 and "no nvtxRangePushA" in warnings[0]  # said once, not a range at a time


def test_a_tilec_nvtx_that_is_no_switch_is_named(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(target="cpu"))
    ran = subprocess.run([sys.executable, str(program)], env=dict(os.environ, TILEC_NVTX="sometimes",
                                                                   TILEC_CACHE_DIR=str(tmp_path / "cache")),
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert "TILEC_NVTX" in ran.stderr and "NVTX ranges stay off" in ran.stderr


# A tool as Nsight attaches one: NVTX's loader calls InitializeInjectionNvtx2 with its export
# table, and the tool fills the core module's push and pop slots (ids from nvtxTypes.h: module
# CORE 1, RangePushA 9, RangePop 11; export table CALLBACKS 1).
NVTX_TOOL = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*Function)(void);
typedef struct {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, Function*** table, unsigned int* size);
} Callbacks;
static void note(const char* what, const char* message) {
  FILE* log = fopen(getenv("NVTX_TOOL_LOG"), "a");
  if (log) { fprintf(log, "%s%s\n", what, message); fclose(log); }
}
static int push(const char* message) { note("push ", message); return 0; }
static int pop(void) { note("pop", ""); return 0; }
int InitializeInjectionNvtx2(const void* (*export_table)(uint32_t id)) {
  const Callbacks* callbacks = (const Callbacks*)export_table(1);
  Function** table = NULL;
  unsigned int size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(1, &table, &size) || size <= 11) return 0;
  *table[9] = (Function)push;
  *table[11] = (Function)pop;
  note("attached", "");
  return 1;
}
"""

@pytest.fixture(scope="module")
def nvtx_tool(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("needs a C compiler to build the NVTX tool")
    found = subprocess.run([sys.executable, "-c", "import tilec\ntilec.set_nvtx(True)"], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, TILEC_NVIDIA_LIB_DIRS=""))
    if found.returncode != 0:
        pytest.skip("NVIDIA's libnvtx3interop is not installed here: " + found.stderr.strip().splitlines()[-1])
    folder = tmp_path_factory.mktemp("nvtx_tool")
    (folder / "tool.c").write_text(NVTX_TOOL)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(folder / "libtool.so"), str(folder / "tool.c")],
                   check=True)
    return folder / "libtool.so"


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_nvidia_s_nvtx_hands_each_range_to_an_attached_tool(nvtx_tool, target, tmp_path):
    log = tmp_path / "tool.log"
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(target=target))
    env = dict(os.environ, TILEC_NVTX="1", NVTX_INJECTION64_PATH=str(nvtx_tool), NVTX_TOOL_LOG=str(log),
               TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_NVIDIA_LIB_DIRS="")
    subprocess.run([sys.executable, str(program)], env=env, check=True, timeout=300)
    lines = log.read_text().splitlines()
    assert lines[0] == "attached"
    pushes = [line[len("push "):] for line in lines if line.startswith("push ")]
    assert "parse + elaborate 'doubled'" in pushes
    assert any(p.startswith(f"passes ({target}") for p in pushes)
    if target == "cuda":
        assert any(p.startswith("nvrtc") for p in pushes)
    assert pushes.count("doubled") == 2
    assert lines.count("pop") == len(pushes)
