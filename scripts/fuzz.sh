#!/usr/bin/env bash
# The sanitizer build and the fuzzers (tests/fuzz/README.md); CI runs this beside
# ./scripts/test.sh.
#
#   ./scripts/fuzz.sh            all of the below
#   ./scripts/fuzz.sh sanitize   build-fuzz/ (clang, ASan + UBSan, libFuzzer), then the
#                                GoogleTest suite under the sanitizers
#   ./scripts/fuzz.sh compile    the libFuzzer target over compile(), from the seed corpus
#   ./scripts/fuzz.sh jit        the mutant loop over tilec.jit(target="cpu")
#
# Each fuzzer runs for TILEC_FUZZ_SECONDS (default 90); "all" runs the two side by
# side. TILEC_FUZZ_SEED fixes their random seed (default: a fresh one, printed).
# Findings go under TILEC_FUZZ_OUT (default build-fuzz/findings); the run then
# fails, naming them.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

FUZZ_SECONDS=${TILEC_FUZZ_SECONDS:-90}
OUT=${TILEC_FUZZ_OUT:-$ROOT/build-fuzz/findings}
SEED=${TILEC_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export TILEC_FUZZ_SEED=$SEED
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks whose fixes are pending (each entry names its bug and input).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/fuzz/regressions/lsan_pending.supp:print_suppressions=0}

die() {
  echo "fuzz.sh: $*" >&2
  exit 1
}

build() {
  command -v clang++ >/dev/null || die "clang++ is missing (Debian: apt-get install clang libclang-rt-dev)"
  if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B build-fuzz "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DTILEC_SANITIZE=address,undefined -DTILEC_BUILD_FUZZERS=ON -DTILEC_BUILD_PYTHON=OFF
  fi
  cmake --build build-fuzz -j"$(nproc)"
}

sanitize() {
  build
  scripts/ctest_again_alone.sh build-fuzz -j"$(nproc)" ||
    die "the sanitized GoogleTest suite failed (above)"
}

fuzz_compile() {
  build
  rm -rf "$OUT/compile"
  mkdir -p "$OUT/compile"
  # New inputs go to a scratch folder, never into the committed seed corpus.
  local scratch known
  scratch=$(mktemp -d)
  known="$OUT/compile/known_signatures.txt"
  trap 'rm -rf "$scratch"' RETURN
  # Bugs already known are those the pending inputs still show: the run passes
  # over them (fork mode: a job that crashes is replaced) to find others.
  python3 tests/fuzz/triage.py --pending --signatures > "$known"
  echo "fuzz.sh: compile fuzzer, $FUZZ_SECONDS s, seed $SEED, $(wc -l < "$known") known failures" \
    "(regressions/compile/pending/), findings in $OUT/compile"
  TILEC_FUZZ_KNOWN_FAILURES="$known" build-fuzz/tilec_compile_fuzzer -fork=1 -ignore_crashes=1 \
    -ignore_timeouts=1 -ignore_ooms=1 -seed="$SEED" -max_total_time="$FUZZ_SECONDS" -timeout=25 \
    -rss_limit_mb=4096 -max_len=65536 -dict=tests/fuzz/compile.dict -print_final_stats=1 \
    -artifact_prefix="$OUT/compile/" "$scratch" tests/fuzz/corpus/compile > "$OUT/compile/fuzzer.log" 2>&1 || true
  # The log's last progress line: executions, coverage, corpus, crashes.
  grep -a -E '^#[0-9]+: cov:' "$OUT/compile/fuzzer.log" | tail -1
  local existing
  mapfile -t existing < <(find "$OUT/compile" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*')
  if ((${#existing[@]} == 0)); then
    echo "fuzz.sh: compile fuzzer: nothing found"
    return 0
  fi
  python3 tests/fuzz/triage.py --known "$known" "${existing[@]}" ||
    die "the compile fuzzer found a failure not known (NEW above; inputs in $OUT/compile/): replay
  one with build-fuzz/tilec_compile_fuzzer FILE; tests/fuzz/README.md says where it goes"
}

fuzz_jit() {
  ./scripts/setup.sh
  .venv/bin/python tests/fuzz/jit_mutants.py --seconds "$FUZZ_SECONDS" --seed "$SEED" --out "$OUT/jit" ||
    die "the jit mutant loop found inputs (above; saved in $OUT/jit/findings/): replay one with
  .venv/bin/python tests/fuzz/jit_mutants.py --replay FILE; fixed, it goes to tests/fuzz/regressions/jit/"
}

case "${1:-all}" in
  sanitize) sanitize ;;
  compile) fuzz_compile ;;
  jit) fuzz_jit ;;
  all)
    sanitize
    ./scripts/setup.sh
    # Two cores, two fuzzers: side by side, each for the whole budget.
    status=0
    fuzz_compile > >(sed 's/^/[compile] /') 2>&1 &
    compile_pid=$!
    fuzz_jit 2>&1 | sed 's/^/[jit] /' || status=1
    wait "$compile_pid" || status=1
    exit "$status"
    ;;
  *) die "usage: scripts/fuzz.sh [sanitize|compile|jit]" ;;
esac
