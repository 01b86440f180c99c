"""The bench scripts' tables as pictures: grouped bars of chosen columns, one group a row,
written as a PNG beside the table (matplotlib, when installed).

    path = plot_table(markdown, ["tilec", "cuBLAS"], "bench/plots/gemm.png", "GEMM", "TFLOP/s")

`markdown` is the table a script prints (and appends to RESULTS.md; other lines around it are
skipped). A cell's value is the number it starts with ("0.49x fp8" is 0.49); a cell without one
("-", "failed: ...") draws no bar. A row is labelled by its cells of `label_columns`, by default
the columns left of the first one drawn. `appended_plot(...)` writes `plots/<name>.png` beside a
results file and returns the markdown line that shows it; `append_results(...)`, what the scripts
call with --append, adds a table, its heading (date, device, commit, command) and its plot.
"""

import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import provenance  # noqa: E402

_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def table_rows(markdown):
    """(header, rows) of the first markdown table in `markdown`, cells stripped."""
    lines = [line.strip() for line in markdown.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("|") and i + 1 < len(lines)
                  and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1])), None)
    if start is None:
        raise ValueError("no markdown table (a | header | row, then a |---| rule) in the text")

    def cells(line):
        return [cell.strip() for cell in line.strip("|").split("|")]

    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(cells(line))
    return cells(lines[start]), rows


def number(cell):
    match = _NUMBER.match(cell)
    return float(match.group(1)) if match else None


def plot_table(markdown, columns, path, title, ylabel, label_columns=None):
    """Draws `columns` of the table in `markdown` as grouped bars into `path` (PNG); returns the
    path, or None where matplotlib is not installed."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg", force=False)
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError:
        return None
    header, rows = table_rows(markdown)
    missing = [c for c in list(columns) + list(label_columns or []) if c not in header]
    if missing:
        raise ValueError(f"the table has no column {missing[0]!r}; its columns: {header}")
    drawn = [header.index(c) for c in columns]
    labelling = [header.index(c) for c in label_columns] if label_columns else range(min(drawn))
    labels = [" ".join(row[i] for i in labelling if i < len(row)) or f"row {n + 1}" for n, row in enumerate(rows)]
    figure, axes = pyplot.subplots(figsize=(max(6.0, 0.9 * len(rows) * len(columns) / 2 + 2), 4.5))
    width = 0.8 / len(columns)
    for k, (column, i) in enumerate(zip(columns, drawn)):
        values = [number(row[i]) if i < len(row) else None for row in rows]
        positions = [n + (k - (len(columns) - 1) / 2) * width for n in range(len(rows))]
        axes.bar([p for p, v in zip(positions, values) if v is not None], [v for v in values if v is not None],
                 width, label=column)
    axes.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=8)
    figure.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    figure.savefig(path, dpi=120)
    pyplot.close(figure)
    return path


def appended_plot(markdown, columns, results_file, name, title, ylabel, label_columns=None):
    """plot_table into plots/<name>.png beside `results_file`; the markdown line that shows it
    there, or "" where matplotlib is not installed."""
    folder = os.path.dirname(os.path.abspath(results_file))
    path = plot_table(markdown, columns, os.path.join(folder, "plots", f"{name}.png"), title, ylabel, label_columns)
    return f"\n![{title}](plots/{name}.png)\n" if path else ""


def append_results(results_file, table, device, name, columns, title, ylabel, label_columns=None):
    """Appends `table` to `results_file` under "### <date> <device> <commit>: `python <the
    running script and its arguments>`", with its plot of `columns` (plots/<name>-<date>-<commit>.png)."""
    today, commit = datetime.date.today(), provenance.commit()
    text = table + appended_plot(table, columns, results_file, f"{name}-{today}-{commit}", title, ylabel, label_columns)
    script = os.path.relpath(os.path.abspath(sys.argv[0]), os.path.join(os.path.dirname(__file__), ".."))
    with open(results_file, "a", encoding="utf-8") as f:
        f.write(f"\n### {today} {device} {commit}: `python {' '.join([script, *sys.argv[1:]])}`\n\n{text}\n")
