"""bench/provenance.py: the commit a table's --append line names."""

import importlib.util
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("provenance", ROOT / "bench" / "provenance.py")
provenance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(provenance)


def test_the_commit_named_in_the_environment_comes_first(monkeypatch):
    monkeypatch.setenv("TILEC_COMMIT", " 050191c ")
    assert provenance.commit() == "050191c"


def test_else_the_checkouts_head(monkeypatch):
    monkeypatch.delenv("TILEC_COMMIT", raising=False)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    assert provenance.commit() == (head.stdout.strip() or "unknown")
