"""tilec.testing.process_func and regression (TileLang's performance regression scripts'
helpers): each regression_ function of the calling module runs, and the latencies it records
are printed one a line."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import tilec.testing
from tilec.testing import perf_regression


@pytest.fixture(autouse=True)
def no_results():
    perf_regression._results.clear()
    yield
    perf_regression._results.clear()


def test_process_func_records_the_latency_under_its_name():
    tilec.testing.process_func(lambda size: size / 2, "regression_gemm", size=3)
    assert perf_regression._results == [perf_regression.PerfResult("gemm", 1.5, None)]


def test_process_func_measures_again_until_positive_then_gives_up():
    latencies = iter([0.0, -1.0, 2.0])
    tilec.testing.process_func(lambda: next(latencies), "flaky")
    assert [r.latency for r in perf_regression._results] == [2.0]
    with pytest.warns(RuntimeWarning, match="never: latency 0.0 is not positive"):
        tilec.testing.process_func(lambda: 0.0, "never")
    assert len(perf_regression._results) == 1


def test_regression_runs_the_callers_cases_in_order_and_prints_latencies(tmp_path):
    script = tmp_path / "regression_example.py"
    script.write_text(textwrap.dedent("""\
        import tilec.testing

        def run_b():
            return 2.0

        def run_a(scale=1.0):
            return 0.5 * scale

        def regression_b():
            tilec.testing.process_func(run_b, "b")

        def regression_a():
            tilec.testing.process_func(run_a, "a_scaled", scale=4.0)

        def helper_not_run():
            raise AssertionError("not a case")

        if __name__ == "__main__":
            tilec.testing.regression()
        """))
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(tilec.__file__).parent.parent)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("  [1/2] a") and lines[1].startswith("  [2/2] b")
    assert lines[2:] == ["a_scaled: 2.0", "b: 2.0"]
