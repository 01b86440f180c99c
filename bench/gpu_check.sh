#!/usr/bin/env bash
# One call on the GPU machine: configure, build, run the GPU tests, print a
# table last. Full logs go to ./gpu-logs; with $OUT (the device tool's output
# folder, which brings back only a few files) also packed as $OUT/gpu-logs.tar.gz.
#
#   bench/gpu_check.sh            # from the repository root
#
# Name the commit: the device machine's .git can be older than the working tree sent with
# the call, and the tables --append writes would carry its commit (bench/provenance.py), so
# run it as `TILEC_COMMIT=<git rev-parse --short HEAD, here> bash bench/gpu_check.sh`.
#
# TILEC_BENCH=0 leaves out the benchmarks. compute-sanitizer's TILEC_SANITIZE_TOOLS (default
# memcheck racecheck synccheck) then run over the GPU tests, through bench/sanitize.sh in
# TILEC_SANITIZE_SHARDS processes (default 8; TILEC_SANITIZE_K and TILEC_SANITIZE_SECONDS
# as that script says); TILEC_SANITIZE=0 leaves them out, TILEC_TESTS=0 the test suites
# before them.
#
# GoogleTest is built from .gtest/ when the machine has no package for it
# (copy Debian's /usr/src/googletest there and carry it).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
LOGS=$ROOT/gpu-logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}

gtest=()
[[ -d .gtest ]] && gtest=(-DTILEC_GTEST_SOURCE_DIR="$ROOT/.gtest")
python=$(command -v python3)

step() {  # step NAME COMMAND...: runs, logs, records pass/fail and seconds
  local name=$1; shift
  local start=$SECONDS
  if "$@" >"$LOGS/$name.log" 2>&1; then status=pass; else status=FAIL; fi
  printf '%-28s %-5s %4ds\n' "$name" "$status" $((SECONDS - start)) >>"$LOGS/summary.txt"
}

: >"$LOGS/summary.txt"
# The device image's compiler flags (LDFLAGS may ask for a static libstdc++, which puts a
# second copy of it beside PyTorch's in one process) are recorded, then not used.
env | grep -E '^(LDFLAGS|CXXFLAGS|CFLAGS|CPPFLAGS)=' >"$LOGS/compiler_env.txt" || true
unset LDFLAGS CXXFLAGS CFLAGS CPPFLAGS
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -1; } \
  >"$LOGS/machine.txt" 2>&1
step configure cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$python" "${gtest[@]}"
step build cmake --build build-gpu -j"$(nproc)"
[[ ${TILEC_TESTS:-1} == 1 ]] && step cuda_runtime_tests ./build-gpu/tilec_tests \
  --gtest_filter='CudaDriverTest.*:CudaModuleTest.*:NvrtcCompilerTest.*:CudaDeviceHeader*:CudaKernel*'
# The CPU machine runs the rest of the C++ tests; TILEC_GPU_ALL_CPP=1 runs them here too.
[[ ${TILEC_GPU_ALL_CPP:-0} == 1 ]] && step all_cpp_tests ./build-gpu/tilec_tests
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
if [[ ${TILEC_BENCH:-1} == 1 ]]; then
  step gemm_bench "$python" bench/gemm.py ${TILEC_GEMM_ARGS:---ladder}
  # Which instructions the GEMM kernels use (tensor cores: HMMA mma.sync, HGMMA/QGMMA wgmma;
  # ldmatrix, stmatrix, cp.async, TMA loads and stores; local memory).
  step gemm_sass bash -c 'for f in "$TILEC_CACHE_DIR"/cuda/*.cubin; do
    echo "$(basename "$f"): $(cuobjdump -sass "$f" | grep -oE "\b(HMMA|HGMMA|QGMMA|LDSM|STSM|LDGSTS|UTMALDG|UTMASTG|LDL|STL)\b" | sort | uniq -c | tr -s " \n" " ")"
  done'
  step call_overhead "$python" bench/call_overhead.py
  step elementwise "$python" bench/elementwise.py
  step attention_bench "$python" bench/attention.py ${TILEC_ATTENTION_ARGS:---quick}
  # DSA (issue 15): each kernel and the whole step against the ceilings and dense attention, then
  # the configs the defaults were chosen from (dsa.py's table and plot land in $LOGS/dsa.md).
  step dsa_bench "$python" bench/dsa.py ${TILEC_DSA_ARGS:-} --append "$LOGS/dsa.md"
  step dsa_configs "$python" bench/dsa_configs.py --only ${TILEC_DSA_CONFIGS:-decode,prefill,indexer}
  step compile_time "$python" bench/compile_time.py
  # On a machine of several GPUs: context-parallel DSA prefill against one GPU (its table and plot
  # land in $LOGS/context_parallel.md and $LOGS/plots/, for bench/RESULTS.md).
  gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
  ((gpus >= 2)) && step dsa_context_parallel "$python" bench/dsa_context_parallel.py --ranks "$gpus" \
    --append "$LOGS/context_parallel.md"
fi
# TILEC_PYTEST_ARGS is split as the shell splits words: -k 'swizzle or vector' stays one expression.
eval "pytest_args=(${TILEC_PYTEST_ARGS:-})"
[[ ${TILEC_TESTS:-1} == 1 ]] && step python_tests_cuda env TILEC_TEST_TARGET=cuda "$python" -m pytest -q \
  -p no:cacheprovider --timeout=600 tests/python "${pytest_args[@]}"
[[ ${TILEC_SANITIZE:-1} == 1 ]] && for tool in ${TILEC_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
  step "sanitize_$tool" env LOGS="$LOGS" bash bench/sanitize.sh "$tool" "${TILEC_SANITIZE_SHARDS:-8}"
done

echo "== machine"; cat "$LOGS/machine.txt"
echo "== GPU tests that ran (not skipped)"
grep -E '^\[  (SKIPPED|FAILED) \]|^\[       OK \] Cuda' "$LOGS/cuda_runtime_tests.log" | head -40
echo "== python tests on the GPU"
grep -E "^(FAILED|ERROR)" "$LOGS/python_tests_cuda.log" | head -30
tail -2 "$LOGS/python_tests_cuda.log"
if [[ ${TILEC_BENCH:-1} == 1 ]]; then
  echo "== GEMM"
  tail -40 "$LOGS/gemm_bench.log"
  echo "== SASS of the cached kernels (instruction counts)"
  head -8 "$LOGS/gemm_sass.log"
  echo "== elementwise bandwidth"
  tail -4 "$LOGS/elementwise.log"
  echo "== call overhead"
  tail -5 "$LOGS/call_overhead.log"
  echo "== DSA (bench/dsa.py)"
  grep -E '^\|' "$LOGS/dsa_bench.log" | tail -14
  tail -1 "$LOGS/compile_time.log"
  [[ -f $LOGS/dsa_context_parallel.log ]] && { echo "== context-parallel DSA prefill"; tail -6 "$LOGS/dsa_context_parallel.log"; }
fi
echo "== compute-sanitizer (GPU tests; errors found)"
[[ ${TILEC_SANITIZE:-1} == 1 ]] && for tool in ${TILEC_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
  tail -1 "$LOGS/sanitize_$tool.log"
done
echo "== summary (logs in $LOGS)"
cat "$LOGS/summary.txt"
[[ -n ${OUT:-} ]] && tar -czf "$OUT/gpu-logs.tar.gz" -C "$LOGS" .
! grep -q FAIL "$LOGS/summary.txt"
