#!/usr/bin/env bash
# Checks tilec as others install it, outside this working tree:
#   1. `python -m build` makes an sdist and, from it, a wheel under 10 MB;
#   2. the wheel installs into a fresh venv, whose `tilec` command answers and which runs the
#      demo (the seed's kernels) from a folder that is not this tree;
#   3. `cmake --install` of build/ (scripts/setup.sh's build) gives a CMake package that
#      examples/cpp finds with find_package(tilec), builds against and runs.
# Needs python3-venv and PyPI (scikit-build-core, nanobind, build). TILEC_PACKAGE_DIR keeps
# the work (the wheel, the venvs, the install) there instead of a temporary folder.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

die() {
  echo "package_check.sh: $*" >&2
  exit 1
}

[[ -f build/CMakeCache.txt ]] || die "no build/: run scripts/setup.sh first"
work=${TILEC_PACKAGE_DIR:-}
if [[ -z "$work" ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

echo "== package_check: python -m build"
python3 -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip install --quiet build
"$work/build-venv/bin/python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; die "python -m build failed (log above)"; }
wheel=$(ls "$work"/dist/tilec-*.whl)
bytes=$(stat -c %s "$wheel")
echo "$(basename "$wheel"): $((bytes / 1024)) KiB"
((bytes < 10 * 1024 * 1024)) || die "the wheel is $bytes bytes, over 10 MB"

echo "== package_check: the wheel in a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$wheel"
"$work/venv/bin/tilec" --version
mkdir -p "$work/elsewhere"
cp examples/demo.py examples/seed_matmul.py examples/seed_dsa_index.py "$work/elsewhere"
(cd "$work/elsewhere" && "$work/venv/bin/python" - <<'PYEOF'
import pathlib
import tilec
# The installed package, not this tree's python/.
assert "site-packages" in tilec.__file__, tilec.__file__
print("tilec", tilec.__version__, "from", pathlib.Path(tilec.__file__).parent)
PYEOF
)
(cd "$work/elsewhere" && "$work/venv/bin/python" demo.py)

echo "== package_check: find_package(tilec) from examples/cpp"
cmake --install build --prefix "$work/prefix" >/dev/null
cmake -S examples/cpp -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/example" >/dev/null
"$work/example/matmul"
echo "package_check.sh: passed"
