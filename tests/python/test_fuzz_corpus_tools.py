"""tests/fuzz's corpus tools without running the suite: a binding the recorder can't write as
JSON (a Python type the core calls into) comes out by its type's name, and make_corpus writes it
as an opaque value."""

import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "fuzz" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_host_object_is_recorded_by_its_types_name(tmp_path, monkeypatch):
    record = load("record_compiles")
    monkeypatch.setenv("TILEC_FUZZ_RECORD", str(tmp_path / "calls.jsonl"))
    monkeypatch.setattr(record, "_calls", [dict(name="main", bindings={"kind": ["host", int]})])
    record.pytest_unconfigure(None)
    call = json.loads((tmp_path / "calls.jsonl").read_text())
    assert call["bindings"]["kind"] == ["host", "<type>"]


def test_make_corpus_writes_a_host_object_as_opaque(monkeypatch):
    monkeypatch.setattr(sys, "path", [str(ROOT / "tests" / "fuzz"), *sys.path])
    make_corpus = load("make_corpus")
    written = make_corpus.Input("def main():\n    pass\n", "main")
    assert written.value(["host", "<type>"]) == "opaque(type)"
    assert written.value(["host", 3.5]) == "opaque(float)"
