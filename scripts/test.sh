#!/usr/bin/env bash
# Sets up, then runs every test: the GoogleTest suite (through ctest), pytest, and the
# installed package's checks (scripts/package_check.sh).
# GPU tests (marked gpu) are skipped with a reason where no GPU is usable.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
./scripts/setup.sh

status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" || status=1
.venv/bin/python -m pytest -q tests/python || status=1
./scripts/package_check.sh || status=1
exit "$status"
