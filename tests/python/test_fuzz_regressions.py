"""Every mutant the jit mutant loop ever found (tests/fuzz/regressions/jit/*.py)
compiles or fails cleanly, each in a fresh process with a time limit, in every
test run. Mutants of bugs not fixed yet wait in regressions/jit/pending/, which
this leaves out (tests/fuzz/README.md)."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions" / "jit"


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.py")), ids=lambda p: p.stem)
def test_mutant_compiles_or_fails_cleanly(path):
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "jit_mutants.py"), "--replay",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode >= 0, f"{path.name} crashed: signal {-done.returncode}\n{done.stderr[-3000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, f"{path.name}: {result['outcome']}: {result['detail']}"
