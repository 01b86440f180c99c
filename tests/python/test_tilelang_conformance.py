"""bench/tilelang_conformance.py: the import swap, which files are programs, TileLang's own
skips, and the classes of small programs written here (run in their own processes)."""

import importlib.util
import json
import os
import pathlib
import textwrap
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tilelang_conformance",
                                               ROOT / "bench" / "tilelang_conformance.py")
conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conformance)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# ---- the import swap


def test_swap_rewrites_every_import_form_and_nothing_else():
    source = textwrap.dedent('''\
        import tilelang
        import tilelang.language as T
        import tilelang.testing
        from tilelang import tvm as tvm
        from tilelang.autotuner import *
        import tilelang as tl
        from tilelang_utils import prepare
        import torch, tilelang.carver.arch as arch
        def f():
            from tilelang.carver.arch import (driver,
                CUDA)  # c
            import tilelang.testing  # note
        s = "import tilelang"
        # import tilelang
        x = tilelang.cdiv(1, 2)
        ''')
    swapped, count = conformance.swap_imports(source)
    assert swapped == textwrap.dedent('''\
        import tilec as tilelang
        import tilec.language as T
        import tilec.testing; import tilec as tilelang
        from tilec import tvm as tvm
        from tilec.autotuner import *
        import tilec as tl
        from tilelang_utils import prepare
        import torch, tilec.carver.arch as arch
        def f():
            from tilec.carver.arch import (driver,
                CUDA)  # c
            import tilec.testing; import tilec as tilelang  # note
        s = "import tilelang"
        # import tilelang
        x = tilelang.cdiv(1, 2)
        ''')
    assert count == 9


def test_swap_keeps_tilelang_bound_after_a_submodule_import():
    swapped, _ = conformance.swap_imports("import tilelang.language\n")
    namespace = {}
    exec(swapped, namespace)
    assert namespace["tilelang"].language is namespace["tilec"].language


def test_swap_leaves_a_file_that_does_not_parse():
    source = "import tilelang\ndef broken(:\n"
    assert conformance.swap_imports(source) == (source, 0)


# ---- which files are programs


def test_discover_finds_programs_and_states_exclusions(tmp_path):
    family = tmp_path / "gemm"
    write(family / "example_gemm.py", "import tilelang\nif __name__ == '__main__':\n    pass\n")
    write(family / "script.py", "import tilelang\nprint('runs at the top level')\n")
    write(family / "utils.py", "import tilelang\nif __name__ == '__main__':\n    pass\n")
    write(family / "example_uses_utils.py", "import tilelang, utils\nutils.go()\n")
    write(family / "library.py", "import tilelang\ndef kernel():\n    pass\n")
    write(family / "test_example_gemm.py", "import example_gemm\nexample_gemm.main()\n")
    write(family / "regression_example_gemm.py", "import tilelang\nprint(1)\n")
    write(family / "example_gemm_sm100.py", "import tilelang\nprint(1)\n")
    write(family / "amd" / "example_gemm.py", "import tilelang\nprint(1)\n")
    write(family / "example_triton_gemm.py", "import tilelang\nprint(1)\n")
    write(family / "torch_ref.py", "import torch\nprint(1)\n")
    write(family / "benchmark_gemm.py", "import tilelang\nprint(1)\n")
    programs, excluded = conformance.discover(str(tmp_path), ["gemm"])
    assert [p["path"] for p in programs] == ["gemm/example_gemm.py", "gemm/example_uses_utils.py",
                                             "gemm/script.py"]
    reasons = dict(excluded)
    assert set(reasons) == {"gemm/example_gemm_sm100.py", "gemm/amd/example_gemm.py",
                            "gemm/example_triton_gemm.py", "gemm/torch_ref.py",
                            "gemm/benchmark_gemm.py"}
    assert "hardware" in reasons["gemm/amd/example_gemm.py"]
    assert "hardware" in reasons["gemm/example_gemm_sm100.py"]
    assert "never imports tilelang" in reasons["gemm/torch_ref.py"]
    assert "benchmark" in reasons["gemm/benchmark_gemm.py"]


def test_tilelang_skips_follow_the_compute_version_markers(tmp_path):
    write(tmp_path / "test_examples.py", '''\
        import tilelang.testing
        import example_old
        import example_new
        from example_both import main as both_main

        @tilelang.testing.requires_cuda
        @tilelang.testing.requires_cuda_compute_version_le(8, 9)
        def test_old():
            example_old.main()

        @tilelang.testing.requires_cuda_compute_version(9, 0)
        def test_new():
            example_new.main()

        @tilelang.testing.requires_cuda_compute_version_eq(8, 0)
        def test_both_on_ampere():
            both_main()

        def test_both_everywhere():
            both_main()
        ''')
    assert conformance.tilelang_skips(str(tmp_path), (9, 0)) == {
        "example_old": "TileLang's own test runs it only where compute capability le 8.9"}
    assert set(conformance.tilelang_skips(str(tmp_path), (8, 0))) == {"example_new"}


# ---- classes of real runs


PROGRAMS = {
    "passes.py": ("pass", '''\
        import tilelang
        assert tilelang.__version__
        '''),
    "lacks_module.py": ("import", '''\
        from tilelang.no_such_module import thing
        '''),
    "lacks_attribute.py": ("import", '''\
        import tilelang
        tilelang.no_such_function(1, 2)
        '''),
    "lacks_name.py": ("import", '''\
        from tilelang import no_such_name
        '''),
    "lacks_package.py": ("missing-package", '''\
        import tilelang
        import a_package_nobody_installed
        '''),
    "compile_error.py": ("compile", '''\
        import tilelang
        import tilelang.language as T

        @tilelang.jit(target="cpu")
        def broken(n):
            @T.prim_func
            def main(A: T.Tensor((n,), "float32")):
                with T.Kernel(1, threads=1) as bx:
                    A[0] = undefined_name
            return main

        broken(4)
        '''),
    "mismatch.py": ("mismatch", '''\
        result, reference = 1.0, 2.0
        assert abs(result - reference) < 1e-3, "result differs from the reference"
        '''),
    "raises.py": ("runtime", '''\
        raise ValueError("a bad argument")
        '''),
    "no_gpu.py": ("needs-gpu", '''\
        raise RuntimeError("Found no NVIDIA driver on your system. Please check ...")
        '''),
    "no_cuda.py": ("needs-gpu", '''\
        raise RuntimeError("CUDA is not available")  # gemm/example_gemm_autotune.py's check
        '''),
    "exits.py": ("runtime", '''\
        import sys
        print("giving up")
        sys.exit(3)
        '''),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_class_of_result(tmp_path, name):
    expected, text = PROGRAMS[name]
    write(tmp_path / "fam" / name, text)
    swapped, _ = conformance.swap_imports((tmp_path / "fam" / name).read_text())
    (tmp_path / "fam" / name).write_text(swapped)
    program = {"family": "fam", "path": f"fam/{name}", "module": name[:-3]}
    result = conformance.run_program(program, str(tmp_path), 60, conformance.sys.executable)
    assert result["class"] == expected, result["output"]
    assert str(tmp_path) not in result["error"]
    assert ".py)" not in result["error"]  # nor tilec's own path in an ImportError


def test_a_compile_error_keeps_its_kernel_location_and_counts_by_message(tmp_path):
    write(tmp_path / "fam" / "compile_error.py", PROGRAMS["compile_error.py"][1])
    path = tmp_path / "fam" / "compile_error.py"
    path.write_text(conformance.swap_imports(path.read_text())[0])
    program = {"family": "fam", "path": "fam/compile_error.py", "module": "compile_error"}
    result = conformance.run_program(program, str(tmp_path), 60, conformance.sys.executable)
    assert result["error"].startswith("tilec._core.CompileError: compile_error.py:9:20: error: "
                                      "name 'undefined_name' is not defined")
    assert result["cause"] == "compile: name 'undefined_name' is not defined"


@pytest.mark.parametrize("cls,error,cause", [
    ("import", "ModuleNotFoundError: No module named 'tilec.autotuner' [a.py:4]",
     "lacks tilec.autotuner"),
    ("import", "ImportError: cannot import name 'tvm' from 'tilec' [a.py:1]", "lacks tilec.tvm"),
    ("import", "AttributeError: module 'tilec.language' has no attribute 'ptr' [a.py:43]",
     "lacks tilec.language.ptr"),
    ("runtime", "TypeError: jit() got an unexpected keyword argument 'x' [a.py:8]",
     "TypeError: jit() got an unexpected keyword argument 'x'"),
    ("needs-gpu", "RuntimeError: Found no NVIDIA driver [a.py:3]", "needs-gpu"),
])
def test_causes_group_alike_failures(cls, error, cause):
    assert conformance.cause_of(cls, error) == cause


def test_the_error_line_names_the_exception_and_the_programs_own_line(tmp_path):
    write(tmp_path / "fam" / "helper.py", "def check(x):\n    raise ValueError(f'bad {x}')\n")
    write(tmp_path / "fam" / "prog.py", "import helper\n\nhelper.check(3)\n")
    program = {"family": "fam", "path": "fam/prog.py", "module": "prog"}
    result = conformance.run_program(program, str(tmp_path), 60, conformance.sys.executable)
    assert result["class"] == "runtime"
    assert result["error"] == "ValueError: bad 3 [helper.py:2]"


def test_a_sibling_module_missing_is_not_a_package_to_install(tmp_path):
    write(tmp_path / "fam" / "prog.py", "import helper\n")
    write(tmp_path / "fam" / "helper.py", "from example_gqa_sink_fwd_bhsd import thing\n")
    write(tmp_path / "fam" / "example_gqa_sink_fwd_bhsd.py", "other = 1\n")
    program = {"family": "fam", "path": "fam/prog.py", "module": "prog"}
    result = conformance.run_program(program, str(tmp_path), 60, conformance.sys.executable)
    assert result["class"] == "import"
    assert result["package"] is None


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    write(tmp_path / "fam" / "hangs.py", f'''\
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("waiting forever", flush=True)
        time.sleep(600)
        ''')
    program = {"family": "fam", "path": "fam/hangs.py", "module": "hangs"}
    start = time.monotonic()
    result = conformance.run_program(program, str(tmp_path), 3, conformance.sys.executable)
    assert time.monotonic() - start < 30
    assert result["class"] == "timeout"
    assert result["error"] == "waiting forever"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the program's child outlived the timeout"


def test_main_writes_the_table_markdown_and_json(tmp_path, capsys):
    checkout = tmp_path / "tilelang"
    write(checkout / "examples" / "elementwise" / "example_add.py", '''\
        import tilelang
        import tilelang.language as T
        if __name__ == "__main__":
            print(T)
        ''')
    write(checkout / "examples" / "elementwise" / "example_broken.py", '''\
        from tilelang.absent import x
        if __name__ == "__main__":
            pass
        ''')
    write(checkout / "examples" / "elementwise" / "example_add_amd.py", "import tilelang\nprint(1)\n")
    out = tmp_path / "out"
    conformance.main([str(checkout), "--out", str(out), "-j", "2", "--families", "elementwise"])
    printed = capsys.readouterr().out
    assert "elementwise/example_add_amd.py: hardware other than the H200" in printed
    assert "pass 1, import 1 (of 2)" in printed
    data = json.loads((out / "results.json").read_text())
    assert [(r["path"], r["class"]) for r in data["results"]] == [
        ("elementwise/example_add.py", "pass"), ("elementwise/example_broken.py", "import")]
    assert data["swapped_imports"] == {"elementwise/example_add.py": 2,
                                       "elementwise/example_broken.py": 1,
                                       "elementwise/example_add_amd.py": 1}
    markdown = (out / "results.md").read_text()
    assert "| elementwise | example_broken.py | import |" in markdown
    assert "ModuleNotFoundError: No module named 'tilec.absent'" in markdown
    assert "| 1 | import | lacks tilec.absent |" in markdown
    assert (out / "logs" / "elementwise__example_add.py.log").read_text().startswith("<module")


def test_main_refuses_a_folder_without_examples(tmp_path):
    with pytest.raises(SystemExit, match="neither a TileLang checkout"):
        conformance.main([str(tmp_path), "--out", str(tmp_path / "out")])


# ---- reference stand-ins


def test_a_package_not_installed_gets_its_stand_in_and_the_row_says_so(tmp_path, monkeypatch):
    stand_ins = tmp_path / "stand_ins"
    write(stand_ins / "absent_reference" / "__init__.py", '''\
        import sys
        print("[conformance] absent_reference is the torch stand-in of a test", file=sys.stderr)
        def attention(x):
            return x
        ''')
    write(stand_ins / "json" / "__init__.py", "raise RuntimeError('json is installed: never used')\n")
    monkeypatch.setattr(conformance, "STAND_INS", str(stand_ins))
    assert conformance.stand_ins_needed(conformance.sys.executable) == ["absent_reference"]

    checkout = tmp_path / "tilelang"
    write(checkout / "examples" / "elementwise" / "example_ref.py", '''\
        import json
        import tilelang
        from absent_reference import attention
        if __name__ == "__main__":
            assert attention(3) == 3
        ''')
    out = tmp_path / "out"
    conformance.main([str(checkout), "--out", str(out), "--families", "elementwise"])
    row = json.loads((out / "results.json").read_text())["results"][0]
    assert (row["class"], row["stand_ins"]) == ("pass", ["absent_reference"])
    markdown = (out / "results.md").read_text()
    assert "| elementwise | example_ref.py | pass |" in markdown and "| absent_reference |" in markdown
    assert "1 programs ran with reference stand-ins" in markdown

    conformance.main([str(checkout), "--out", str(out), "--families", "elementwise", "--no-stand-ins"])
    row = json.loads((out / "results.json").read_text())["results"][0]
    assert (row["class"], row["package"]) == ("missing-package", "absent_reference")
