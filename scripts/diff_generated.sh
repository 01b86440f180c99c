#!/usr/bin/env bash
# Whether two commits generate the same code, without a GPU: builds each in a scratch worktree,
# runs the Python suite there with scripts/emit_kernels.py, which writes the CUDA (sm_90a) and
# HIP (gfx90a) source of every kernel the suite compiles, and lists the files that differ.
#
#   scripts/diff_generated.sh REV_A REV_B      # from a set-up checkout (./scripts/setup.sh)
#
# Prints the count of kernels' files compared and each one that differs or exists on one side
# only; the sources stay in $TILEC_EMIT_OUT (default a temporary folder) for diff -r.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
(( $# == 2 )) || { echo "usage: scripts/diff_generated.sh REV_A REV_B" >&2; exit 2; }
[[ -x .venv/bin/python ]] || { echo "diff_generated.sh: run ./scripts/setup.sh first" >&2; exit 2; }
out=${TILEC_EMIT_OUT:-$(mktemp -d)}
mkdir -p "$out"
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
for side in a b; do
  rev=$([[ $side == a ]] && echo "$1" || echo "$2")
  git worktree remove --force "$tree" >/dev/null 2>&1 || true
  git worktree add -q --detach "$tree" "$rev"
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DTILEC_BUILD_TESTS=OFF \
    -DPython_EXECUTABLE="$ROOT/.venv/bin/python" >"$out/build_$side.log" 2>&1
  cmake --build "$tree/build" -j"$(nproc)" >>"$out/build_$side.log" 2>&1
  (cd "$tree" && TILEC_EMIT_ROOT="$tree" TILEC_EMIT_DIR="$out/$side" \
     PYTHONPATH="$tree/python:$ROOT/scripts" "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
     -p emit_kernels tests/python -k "not every_kernel" --ignore tests/python/test_hip.py \
     >"$out/tests_$side.log" 2>&1) || true
done
echo "$(ls "$out/a" | wc -l) files at $1, $(ls "$out/b" | wc -l) at $2 (in $out):"
diff -rq "$out/a" "$out/b" | sed "s|$out/||g" || true
