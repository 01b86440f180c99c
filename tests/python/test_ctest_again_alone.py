"""scripts/ctest_again_alone.sh (scripts/fuzz.sh's sanitized suite): a failed test is run again
alone; one that fails again fails the run and is named with its failure lines, one that passes
alone is named as not reproduced alone and the run passes."""

import pathlib
import shutil
import subprocess

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ctest_again_alone.sh"


def run(tmp_path, tests):
    if not shutil.which("ctest"):
        pytest.skip("ctest (CMake) is not installed")
    (tmp_path / "CTestTestfile.cmake").write_text("".join(f'add_test({name} "sh" "-c" "{body}")\n'
                                                          for name, body in tests.items()))
    return subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=120)


PASSES = "exit 0"
FAILS = "echo 'k.cc:3: Failure'; echo 'Expected: 1'; exit 1"


def flaky(tmp_path):
    # Fails the first time only: beside the others, not alone.
    mark = tmp_path / "ran_once"
    return f"test -f {mark} || {{ touch {mark}; exit 1; }}"


def test_all_passing_is_a_pass_with_no_verdict(tmp_path):
    done = run(tmp_path, {"good": PASSES})
    assert done.returncode == 0, done.stdout
    assert "fuzz.sh:" not in done.stdout


def test_a_failure_that_repeats_alone_fails_the_run_with_its_lines(tmp_path):
    done = run(tmp_path, {"good": PASSES, "bad": FAILS, "once": flaky(tmp_path)})
    assert done.returncode == 1
    verdict = done.stdout[done.stdout.index("fuzz.sh: tests that failed, and failed again alone:"):]
    assert "Test #2: bad" in verdict and "***Failed" in verdict
    assert "fuzz.sh:     k.cc:3: Failure" in verdict and "fuzz.sh:     Expected: 1" in verdict
    assert "Test #3: once" in verdict and "Passed" in verdict  # rerun with the others that failed


def test_a_failure_alone_does_not_reproduce_is_named_and_passes(tmp_path):
    done = run(tmp_path, {"good": PASSES, "once": flaky(tmp_path)})
    assert done.returncode == 0, done.stdout
    assert "fuzz.sh: tests that failed beside the others and passed alone (not reproduced alone):" in done.stdout
    assert "fuzz.sh:   1/1 Test #2: once" in done.stdout
