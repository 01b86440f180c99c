#!/usr/bin/env bash
# One device call for issue 13's conformance run: builds tilec (no C++ tests) into build-gpu,
# installs fla-core's wheel from .whl/ if it is there (bench/fla_wheels.sh), optionally runs GPU
# pytest files ($PYTESTS, with TILEC_TEST_TARGET=cuda), then TileLang's examples through
# bench/tilelang_conformance.py. Everything under $OUT (the device tool's output folder).
#
#   device run, carry ["exp", ".whl"]:  bash bench/tilelang_conformance_gpu.sh
#
# TileLang's examples/ are expected in exp/tl, and fla-core's wheel in .whl/ (both ignored by
# git), made on the CPU machine with
#   mkdir -p exp/tl && git --git-dir=<a tile-ai/tilelang clone>/.git archive a35008a examples | tar -x -C exp/tl
#   bench/fla_wheels.sh
# CONF_JOBS (4), CONF_TIMEOUT (90 s a program), CONF_SECONDS (480 s in all), CONF_ARGS (more
# runner options), PYTEST_SECONDS (240) bound each step.
set -uo pipefail
unset LDFLAGS CXXFLAGS CFLAGS CPPFLAGS
OUT=${OUT:-$PWD/conformance-out}
mkdir -p "$OUT"
start=$SECONDS
python=$(command -v python3)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEC_BUILD_TESTS=OFF \
  -DPython_EXECUTABLE="$python" >"$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" >"$OUT/build.log" 2>&1 || { grep -m5 error "$OUT/build.log"; exit 1; }
echo "built in $((SECONDS - start)) s"
site=""
if compgen -G ".whl/fla_core-*.whl" >/dev/null; then
  site=/tmp/conformance-site
  "$python" -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl/fla_core-*.whl \
    >"$OUT/wheels.log" 2>&1 || tail -5 "$OUT/wheels.log"
fi
export PYTHONPATH=$PWD/python${site:+:$site} TILEC_CACHE_DIR=/tmp/tilec-cache
if [[ -n "${PYTESTS:-}" ]]; then
  # PYTESTS is split as the shell splits words: "tests/python/test_x.py -k name".
  TILEC_TEST_TARGET=cuda timeout "${PYTEST_SECONDS:-240}" "$python" -m pytest -q -p no:cacheprovider $PYTESTS \
    >"$OUT/pytest.log" 2>&1
  echo "pytest rc=$? $(tail -1 "$OUT/pytest.log")"
fi
timeout "${CONF_SECONDS:-480}" "$python" bench/tilelang_conformance.py exp/tl --out "$OUT/conf" \
  -j "${CONF_JOBS:-4}" --timeout "${CONF_TIMEOUT:-90}" ${CONF_ARGS:-} >"$OUT/conf.log" 2>&1
echo "conformance rc=$? after $((SECONDS - start)) s"
tail -45 "$OUT/conf.log"
