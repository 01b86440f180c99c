#!/usr/bin/env bash
# Sets up, then runs the tour: the seed's kernels and a few more, checked
# against NumPy, with compile and run times.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
./scripts/setup.sh
exec .venv/bin/python examples/demo.py "$@"
