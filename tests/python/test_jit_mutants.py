"""The jit path's mutant loop (tests/fuzz/jit_mutants.py): how it tells a
clean failure from a finding, and that its seeds are the corpus's kernels."""

import ast
import json
import os
import pathlib
import random
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import jit_mutants  # noqa: E402

KERNEL = '''
import tilec
import tilec.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        {statement}


KERNEL = tilec.jit(main, target="cpu")
ARGS = {{}}
'''


def outcome(tmp_path, text, timeout=60):
    path = tmp_path / "mutant.py"
    path.write_text(text)
    with open(tmp_path / "worker.log", "w") as log:
        worker = jit_mutants.Worker(dict(os.environ), log)
        try:
            return worker.run(path, timeout)
        finally:
            worker.stop()


def test_a_compiling_mutant(tmp_path):
    assert outcome(tmp_path, KERNEL.format(statement="A[0] = 1.0"))["outcome"] == "compiled"


def test_a_located_compile_error_is_clean(tmp_path):
    result = outcome(tmp_path, KERNEL.format(statement="T.copyy(A, A)"))
    assert result["outcome"] == "compile-error"
    assert "unknown primitive 'T.copyy'" in result["detail"]


def test_an_error_of_the_mutants_own_python_is_clean(tmp_path):
    assert outcome(tmp_path, "undefined_name\n")["outcome"] == "python-error"


def test_an_exception_out_of_the_core_is_a_finding(tmp_path):
    # divmod stands in for a core that raises something other than a located
    # CompileError from inside its C++ (a builtin leaves no Python frame).
    text = "import tilec._core\ntilec._core.compile = divmod\n" + KERNEL.format(statement="A[0] = 1.0")
    result = outcome(tmp_path, text)
    assert result["outcome"] == "core-exception"
    assert "TypeError" in result["detail"]


def test_a_crash_is_a_finding(tmp_path):
    result = outcome(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    assert result == {"outcome": "crash", "detail": "the worker died: SIGSEGV"}


def test_a_hang_is_a_finding(tmp_path):
    result = outcome(tmp_path, "import time\ntime.sleep(60)\n", timeout=2)
    assert result == {"outcome": "hang", "detail": "no answer within 2 s"}


def test_located_means_position_source_line_and_caret():
    assert jit_mutants.is_located("k.py:3:5: error: bad\n    x = y\n        ^")
    assert not jit_mutants.is_located("error: bad")
    assert not jit_mutants.is_located("k.py:3:5: error: bad\n    x = y\n")


def test_signature_leaves_out_numbers_and_names():
    result = {"outcome": "core-exception",
              "detail": "RuntimeError: internal compiler error in pass verify on 'main': buffer 'B_f' "
                        "is used outside its allocation\nIR: ..."}
    assert jit_mutants.signature(result) == (
        "core-exception: RuntimeError: internal compiler error in pass verify on '_': buffer '_' is "
        "used outside its allocation")


def test_every_prim_func_of_the_corpus_is_a_seed_and_its_unmutated_mutant_is_python():
    seeds = jit_mutants.load_seeds(jit_mutants.CORPUS)
    corpus = list(jit_mutants.CORPUS.glob("*.py"))
    assert len(seeds) > len(corpus) // 2
    for seed in seeds:
        kernel = seed.module_text if seed.module_text is not None else seed.kernel
        ast.parse(jit_mutants.mutant_text(seed, kernel, seed.params, "unmutated"))


def test_unmutated_seeds_compile_or_fail_cleanly(tmp_path):
    seeds = random.Random(1).sample(jit_mutants.load_seeds(jit_mutants.CORPUS), 4)
    for seed in seeds:
        kernel = seed.module_text if seed.module_text is not None else seed.kernel
        result = outcome(tmp_path, jit_mutants.mutant_text(seed, kernel, seed.params, "unmutated"))
        assert result["outcome"] not in jit_mutants.FINDINGS, (seed.name, result)


def test_the_loop_runs_for_its_budget_and_reports(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "one.py").write_text((jit_mutants.CORPUS / "error_undefined_name.py").read_text())
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "jit_mutants.py"), "--seconds", "3",
                           "--seed", "1", "--corpus", str(corpus), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert "jit_mutants: 1 seeds, seed 1" in done.stdout, done.stdout + done.stderr
    assert " mutants in " in done.stdout
    # It fails exactly when it found something not known (a finding is a bug to fix).
    assert done.returncode == (1 if " NEW " in done.stdout else 0), done.stdout + done.stderr


def test_a_finding_its_run_alone_does_not_show_is_saved_but_not_confirmed(tmp_path):
    # A worker killed for what earlier mutants left it, or a hang of a loaded machine: the
    # mutant crashes the first time only (it leaves a marker), so its run alone compiles.
    marker = tmp_path / "crashed_once"
    text = (f"import os, pathlib, signal\nif not pathlib.Path({str(marker)!r}).exists():\n"
            f"    pathlib.Path({str(marker)!r}).touch()\n    os.kill(os.getpid(), signal.SIGKILL)\n"
            + KERNEL.format(statement="A[0] = 1.0"))
    result = outcome(tmp_path, text)
    assert result == {"outcome": "crash", "detail": "the worker died: SIGKILL"}
    (tmp_path / "findings").mkdir()
    saved, reproduced = jit_mutants.report(tmp_path / "mutant.py", result, dict(os.environ), 60, tmp_path)
    assert not reproduced
    assert pathlib.Path(saved).name.startswith("compiled-")
    assert "# outcome alone: compiled" in pathlib.Path(saved).read_text()


def test_a_finding_its_run_alone_shows_is_confirmed(tmp_path):
    text = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    result = outcome(tmp_path, text)
    (tmp_path / "findings").mkdir()
    saved, reproduced = jit_mutants.report(tmp_path / "mutant.py", result, dict(os.environ), 60, tmp_path)
    assert reproduced
    assert pathlib.Path(saved).name.startswith("crash-")
