"""bench/tilelang_same_source.py without a GPU: the import swap of an example, the processes of
the sides (a stand-in Python answers for them), the table and the arguments."""

import importlib.util
import json
import os
import pathlib
import stat
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tilelang_same_source",
                                               ROOT / "bench" / "tilelang_same_source.py")
same_source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_source)

GEMM = same_source.CASES[0]


def examples(tmp_path):
    """An examples/ folder with a file at every case's program path."""
    folder = tmp_path / "tl" / "examples"
    for case in same_source.CASES:
        (folder / case.program).parent.mkdir(parents=True, exist_ok=True)
        (folder / case.program).write_text("import tilelang\n")
    return folder


def stand_in_python(tmp_path, body):
    """An executable that plays the sides' Python: `-c ...` (the tilelang probe) prints a
    version; a child call (script --child CASE SIDE ...) runs body with $3 = CASE, $4 = SIDE."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n"
                    'if [ "$1" = "-c" ]; then echo 0.1.15-stand-in; exit 0; fi\n' + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def mark(result):
    return f"echo '{same_source.RESULT_MARK}{json.dumps(result)}'"


def test_tilec_side_loads_the_example_import_swapped(tmp_path, monkeypatch):
    example = tmp_path / "example_gemm.py"
    example.write_text(textwrap.dedent("""\
        import tilelang
        import tilelang.language as T
        FRAMEWORK = tilelang.__name__
        LANGUAGE = T.__name__
    """))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    module = same_source.load_example(str(example), "tilec")
    assert (module.FRAMEWORK, module.LANGUAGE) == ("tilec", "tilec.language")
    assert "import tilec as tilelang" in (tmp_path / "work" / "example_gemm.py").read_text()
    assert "import tilelang\n" in example.read_text()  # the example itself is left alone


def test_tilelang_side_loads_the_example_as_it_is(tmp_path, monkeypatch):
    example = tmp_path / "example.py"
    example.write_text("import tilelang\n")
    fake = tmp_path / "site" / "tilelang"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "tilelang", raising=False)
    monkeypatch.chdir(tmp_path / "site")
    module = same_source.load_example(str(example), "tilelang")
    assert module.tilelang.__file__ == str(fake / "__init__.py")


def test_an_example_imports_the_helpers_beside_it(tmp_path, monkeypatch):
    # deepseek_v32's examples import their folder's utils.py
    folder = tmp_path / "deepseek_v32"
    folder.mkdir()
    (folder / "helpers_of_this_example.py").write_text("ANSWER = 42\n")
    example = folder / "sparse.py"
    example.write_text("import tilelang\nfrom helpers_of_this_example import ANSWER\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "helpers_of_this_example", raising=False)
    assert same_source.load_example(str(example), "tilec").ANSWER == 42


def test_the_dsa_cases_name_their_examples_and_anchors():
    dsa = [case for case in same_source.CASES if case.name.startswith("dsa ")]
    assert {case.program for case in dsa} == {
        "deepseek_v32/sparse_mla_fwd.py", "deepseek_v32/sparse_mla_fwd_pipelined.py",
        "deepseek_v32/topk_selector.py", "deepseek_v32/fp8_lighting_indexer.py"}
    assert all(callable(case.anchor) and case.work > 0 for case in dsa)


def test_each_side_gets_a_fresh_cache_of_its_own():
    tilec = same_source.fresh_cache_env("tilec", "/tmp/x")
    tilelang = same_source.fresh_cache_env("tilelang", "/tmp/y")
    assert tilec["TILEC_CACHE_DIR"] == "/tmp/x"
    assert (tilelang["TILELANG_CACHE_DIR"], tilelang["TILELANG_DISABLE_CACHE"]) == ("/tmp/y", "1")


def test_a_side_result_error_and_timeout_come_back_as_cells(tmp_path):
    ok = stand_in_python(tmp_path, mark({"compile_s": 0.5, "rate": 700.0}) + "\n")
    assert same_source.spawn(GEMM, "tilec", "/ex", 30, 20, ok)[0] == {"compile_s": 0.5,
                                                                      "rate": 700.0}
    crash = stand_in_python(tmp_path, "echo 'Traceback'; echo 'tilec.CompileError: boom' >&2; "
                                      "exit 3\n")
    assert same_source.spawn(GEMM, "tilec", "/ex", 30, 20, crash)[0] == {
        "failure": "exit 3: tilec.CompileError: boom"}
    hang = stand_in_python(tmp_path, "sleep 30\n")
    assert same_source.spawn(GEMM, "tilec", "/ex", 0.5, 20, hang)[0] == {
        "failure": "timeout after 0.5 s"}


def test_table_with_stand_in_timings(tmp_path):
    python = stand_in_python(tmp_path, textwrap.dedent(f"""\
        case "$4" in
          anchor) {mark({"rate": 800.0})} ;;
          tilelang) case "$3" in
                      rms_norm*) {mark({"compile_s": 6.0, "rate": 600.0, "error": 0.5})} ;;
                      *) {mark({"compile_s": 6.0, "rate": 600.0, "error": 0.00123})} ;;
                    esac ;;
          tilec) case "$3" in
                   rms_norm*) echo 'RuntimeError: a | pipe' >&2; exit 1 ;;
                   *) {mark({"compile_s": 0.5, "rate": 720.0, "error": 0.001})} ;;
                 esac ;;
        esac
    """))
    out = tmp_path / "out"
    same_source.main([str(examples(tmp_path)), "--out", str(out), "--python", python,
                      "--cases", "4096x4096x4096"])
    same_source.main([str(examples(tmp_path)), "--out", str(out / "norm"), "--python", python,
                      "--cases", "rms_norm"])
    gemm = (out / "same_source.md").read_text().splitlines()
    assert gemm[0].startswith("Same source, tilelang 0.1.15-stand-in against tilec")
    assert gemm[-1] == ("| gemm matmul | 4096x4096x4096 fp16 | 6.00 | 0.50 | 12.00x | TFLOP/s "
                        "| 600.0 | 720.0 | 1.20x | 800.0 | 0.90x | 0.00123 | 0.00100 |  |")
    norm = (out / "norm" / "same_source.md").read_text().splitlines()[-1]
    assert norm == ("| rms_norm | 8192x8192 fp32 | 6.00 | - | - | GB/s | 600.0 | - | - | 800.0 "
                    "| - | 0.50000 | - | tilec: exit 1: RuntimeError: a \\| pipe; tilelang: error "
                    "0.5 is over 0.01 |")
    rows = json.loads((out / "same_source.json").read_text())["rows"]
    assert [r["case"] for r in rows] == ["gemm matmul"]
    assert sorted(os.listdir(out / "logs")) == [
        "gemm_matmul_4096x4096x4096_fp16.anchor.log",
        "gemm_matmul_4096x4096x4096_fp16.tilec.log",
        "gemm_matmul_4096x4096x4096_fp16.tilelang.log"]


def test_ncu_profiles_one_call_of_each_side_into_its_own_report(tmp_path):
    # The stand-in ncu writes its options to the --log-file it was given and runs the rest of
    # its command line, the side's child, which prints whether it was asked to --profile.
    ncu = tmp_path / "ncu"
    ncu.write_text(textwrap.dedent("""\
        #!/bin/sh
        options=""
        while [ "$1" != "${1#--}" ]; do
          if [ "$1" = "--log-file" ]; then log=$2; fi
          options="$options $1 $2"; shift 2
        done
        echo "$options" > "$log"
        exec "$@"
    """))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    python = stand_in_python(tmp_path, textwrap.dedent(f"""\
        case "$*" in
          *--sources*--profile) {mark({"rate": 800.0})} ;;
          *) echo 'RuntimeError: not profiled' >&2; exit 1 ;;
        esac
    """))
    out = tmp_path / "out"
    same_source.main([str(examples(tmp_path)), "--out", str(out), "--python", python,
                      "--ncu", str(ncu), "--cases", "elementwise"])
    row = json.loads((out / "same_source.json").read_text())["rows"][0]
    assert row["anchor"] == row["tilec"] == row["tilelang"] == {"rate": 800.0}
    report = (out / "logs" / "elementwise_add_8192x8192_fp32.tilec.ncu.txt").read_text()
    assert "--profile-from-start off" in report
    assert "--section SpeedOfLight" in report and "--section WarpStateStats" in report
    assert (out / "sources").is_dir()


def test_sides_past_the_budget_are_not_run(tmp_path):
    python = stand_in_python(tmp_path, "sleep 30\n")
    out = tmp_path / "out"
    same_source.main([str(examples(tmp_path)), "--out", str(out), "--python", python,
                      "--budget", "16", "--timeout", "2", "--cases", "elementwise"])
    row = json.loads((out / "same_source.json").read_text())["rows"][0]
    assert row["anchor"] == {"failure": "timeout after 2 s"}
    assert row["tilec"] == {"failure": "not run: the 16 s budget was spent"}


def test_missing_tilelang_stops_with_how_to_install_it(tmp_path, monkeypatch):
    broken = tmp_path / "site" / "tilelang"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('libtvm_compiler.so: cannot open')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    with pytest.raises(SystemExit) as stop:
        same_source.main([str(examples(tmp_path)), "--out", str(tmp_path / "out")])
    message = str(stop.value)
    assert "tilelang does not import: ImportError: libtvm_compiler.so: cannot open" in message
    assert "--target /tmp/site .whl/*.whl" in message
    assert not (tmp_path / "out").exists()


def test_arguments_are_checked(tmp_path, capsys):
    folder = examples(tmp_path)
    for argv, says in [([str(folder), "--reps", "5"], "--reps must be at least 20"),
                       ([str(folder), "--cases", "nothing"], "no case matches 'nothing'"),
                       ([str(folder), "--timeout", "0"], "must be positive"),
                       ([], "the TileLang checkout is required")]:
        with pytest.raises(SystemExit):
            same_source.main(argv)
        assert says in capsys.readouterr().err
    (folder / GEMM.program).unlink()
    with pytest.raises(SystemExit, match="missing gemm/example_gemm.py"):
        same_source.main([str(folder)])
