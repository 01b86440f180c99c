#!/usr/bin/env bash
# Sets up a working tree: .venv with the Python tools, the CMake build (libtilec,
# the tilec binary, the _core module, the tests), and the venv importing tilec from
# python/ and running its `tilec` command. Idempotent: a second run only rebuilds what changed.
# (`pip install .` or `pip install -e .` installs tilec as a package instead: README.)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

die() {
  echo "setup.sh: $*" >&2
  exit 1
}

command -v python3 >/dev/null || die "python3 is missing (Debian: apt-get install python3 python3-venv)"
command -v cmake >/dev/null || die "cmake is missing (Debian: apt-get install cmake)"
if [[ -z "${CXX:-}" ]] && ! command -v c++ >/dev/null && ! command -v g++ >/dev/null \
    && ! command -v clang++ >/dev/null; then
  die "no C++ compiler (Debian: apt-get install g++)"
fi

if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
fi
PY="$ROOT/.venv/bin/python"

# pip runs only when a package is missing.
missing=$("$PY" - <<'PYEOF'
import importlib.metadata as metadata

def present(name):
    try:
        return bool(metadata.version(name))
    except metadata.PackageNotFoundError:
        return False

print(" ".join(name for name in ("numpy", "nanobind", "pytest", "ml_dtypes", "matplotlib") if not present(name)))
PYEOF
)
if [[ -n "$missing" ]]; then
  "$PY" -m pip install --quiet $missing
fi

if [[ ! -f build/CMakeCache.txt ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$PY"
fi
cmake --build build -j"$(nproc)"

# The CMake build writes the built parts into python/tilec, so the package runs from the
# source tree: a path file puts python/ on the venv's path (an editable pip install would
# build a second copy of everything into the venv).
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
echo "$ROOT/python" >"$site/tilec-source-tree.pth"
ln -sf "$ROOT/python/tilec/bin/tilec" .venv/bin/tilec
