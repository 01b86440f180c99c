"""bench/plots.py without a GPU: a results table drawn as grouped bars beside it, each row a group
of the chosen columns; cells without a number draw no bar; a column the table lacks is named;
and bench/call_overhead.py --device cpu --append writes its table and plot into a results file."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plots are drawn with matplotlib")

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("plots", ROOT / "bench" / "plots.py")
plots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plots)

TABLE = """### GEMM, a heading the table comes after

| shape | dtype | tilec | cuBLAS | Triton | tilec / cuBLAS |
|---|---|---|---|---|---|
| 8192^3 | bfloat16 | 780.5 | 765.0 | - | 1.02 |
| 4096^3 | float8 | 1402.1 | 1390.4 | 1100.0 | 1.01x fp8 |

| another table | after |
|---|---|
| is | ignored |
"""


def test_a_table_reads_as_its_header_and_rows_and_cells_as_their_leading_number():
    header, rows = plots.table_rows(TABLE)
    assert header == ["shape", "dtype", "tilec", "cuBLAS", "Triton", "tilec / cuBLAS"]
    assert [row[0] for row in rows] == ["8192^3", "4096^3"]
    assert [plots.number(c) for c in ("780.5", "1.01x fp8", "-", "failed: x", "2.7e-07")] == \
        [780.5, 1.01, None, None, 2.7e-07]
    with pytest.raises(ValueError, match="no markdown table"):
        plots.table_rows("no table here")


def test_the_columns_asked_for_are_drawn_and_a_missing_one_is_named(tmp_path):
    path = plots.plot_table(TABLE, ["tilec", "cuBLAS", "Triton"], str(tmp_path / "gemm.png"), "GEMM", "TFLOP/s")
    image = matplotlib.pyplot.imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 500
    other = plots.plot_table(TABLE, ["tilec"], str(tmp_path / "tilec.png"), "GEMM", "TFLOP/s")
    assert not np.array_equal(image, matplotlib.pyplot.imread(other)[:image.shape[0], :image.shape[1]])
    with pytest.raises(ValueError, match="the table has no column 'rocBLAS'"):
        plots.plot_table(TABLE, ["rocBLAS"], str(tmp_path / "x.png"), "GEMM", "TFLOP/s")
    with pytest.raises(ValueError, match="the table has no column 'M'"):
        plots.plot_table(TABLE, ["tilec"], str(tmp_path / "x.png"), "GEMM", "TFLOP/s", label_columns=["M"])


def test_appended_plots_go_to_plots_beside_the_results_file(tmp_path):
    line = plots.appended_plot(TABLE, ["tilec", "cuBLAS"], str(tmp_path / "RESULTS.md"), "gemm-test", "GEMM", "TFLOP/s")
    assert line == "\n![GEMM](plots/gemm-test.png)\n"
    assert (tmp_path / "plots" / "gemm-test.png").stat().st_size > 1000


def test_call_overhead_on_the_cpu_appends_its_table_and_plot(tmp_path):
    pytest.importorskip("torch", reason="bench/call_overhead.py times torch's calls beside tilec's")
    results = tmp_path / "RESULTS.md"
    env = dict(os.environ, TILEC_COMMIT="abc1234", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, str(ROOT / "bench" / "call_overhead.py"), "--device", "cpu", "--calls", "50",
                    "--n", "64", "--append", str(results)], check=True, env=env, timeout=600)
    text = results.read_text()
    assert "CPU backend abc1234: `python bench/call_overhead.py --device cpu" in text
    assert "| tilec kernel(a, b, c) |" in text and "| torch a + b |" in text
    (plot,) = list((tmp_path / "plots").glob("call_overhead-cpu-*-abc1234.png"))
    assert f"(plots/{plot.name})" in text
