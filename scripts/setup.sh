#!/usr/bin/env bash
# Sets up a working tree: .venv with the Python tools, the CMake build (libtilec,
# the tilec binary, the _core module, the tests), and tilec installed editable.
# Idempotent: a second run only rebuilds what changed.
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

# pip runs only when a package is missing. setuptools>=70.1 builds editable
# installs without the separate wheel package.
missing=$("$PY" - <<'PYEOF'
import importlib.metadata as metadata

wanted = {"numpy": None, "nanobind": None, "pytest": None, "ml_dtypes": None,
          "setuptools": (70, 1)}

def present(name, minimum):
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return minimum is None or tuple(int(p) for p in version.split(".")[:2]) >= minimum

print(" ".join(name + (">=%d.%d" % minimum if minimum else "")
               for name, minimum in wanted.items() if not present(name, minimum)))
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

if ! "$PY" -m pip show --quiet tilec >/dev/null 2>&1; then
  "$PY" -m pip install --quiet --no-build-isolation --no-deps -e python
fi
