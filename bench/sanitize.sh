#!/usr/bin/env bash
# compute-sanitizer over the GPU tests, split over processes that run at once (the tools'
# slowdown is mostly host-side, so shards overlap well on one GPU).
#
#   bench/sanitize.sh TOOL [SHARDS]     # TOOL: memcheck, racecheck, synccheck, initcheck
#
# TOOL none runs the same shards without a tool: the GPU tests in a fraction of their
# one-process time. TILEC_SANITIZE_MARK replaces the -m expression, e.g. "not deliberate_fault"
# with TILEC_TEST_TARGET=cuda for the whole Python suite on the GPU.
#
# Runs every test marked gpu, except those marked deliberate_fault (they trap on purpose, and
# the tool rightly reports the trap). TILEC_SANITIZE_K narrows them (a pytest -k expression);
# TILEC_SANITIZE_SECONDS bounds each shard (default 540). Logs: $LOGS (default ./gpu-logs)
# /sanitize_TOOL_N.log. Prints one line: tests passed/failed and the tool's error counts;
# exits non-zero on any test failure, tool error or shard that ran out of time.
set -uo pipefail
tool=${1:?usage: bench/sanitize.sh TOOL [SHARDS]}
shards=${2:-8}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
LOGS=${LOGS:-$ROOT/gpu-logs}
mkdir -p "$LOGS"
python=$(command -v python3)
select=(-m "${TILEC_SANITIZE_MARK:-gpu and not deliberate_fault}")
[[ -n ${TILEC_SANITIZE_K:-} ]] && select+=(-k "$TILEC_SANITIZE_K")

mapfile -t tests < <("$python" -m pytest -q -p no:cacheprovider --collect-only "${select[@]}" \
  tests/python 2>/dev/null | grep '::')
if (( ${#tests[@]} == 0 )); then
  echo "$tool: no tests selected"; exit 1
fi
# The tools slow kernels by 10-100x; the pipeline matrix's watchdog allows that much more.
[[ $tool != none ]] && export TILEC_WATCHDOG_SECONDS=${TILEC_WATCHDOG_SECONDS:-480}
# CUPTI takes one subscriber and the tool is it: the tests that time with CUPTI skip.
[[ $tool != none ]] && export TILEC_UNDER_SANITIZER=1
# racecheck slows a kernel by its shared accesses times its blocks: the tests' reference
# kernels (torch's matmuls in float64) took minutes each. It checks tilec's kernels only
# (each is named tilec_<function>).
filter=()
[[ $tool == racecheck ]] && filter=(--kernel-name kns=tilec_)
if [[ $tool == racecheck ]]; then
  compute-sanitizer --tool racecheck "${filter[@]}" "$python" bench/race_control.py \
    >"$LOGS/racecheck_control.log" 2>&1
  if ! grep -qE 'RACECHECK SUMMARY: [1-9]|Race reported' "$LOGS/racecheck_control.log"; then
    echo "racecheck reported no hazard in bench/race_control.py's racy kernel: it checks nothing"
    exit 1
  fi
fi
# The shards share the machine's cores: each one's CPU-backend kernels (OpenMP) get their share,
# not a thread a core each (oversubscribed, the autotuner's CPU timings were noise and its tests
# picked the slow config).
cores=$(nproc)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( cores / shards > 0 ? cores / shards : 1 ))}
pids=()
for ((s = 0; s < shards; s++)); do
  part=()
  for ((i = s; i < ${#tests[@]}; i += shards)); do part+=("${tests[i]}"); done
  (( ${#part[@]} )) || continue
  # Each shard its own kernel cache: concurrent first compiles don't wait on one another.
  sanitizer=(compute-sanitizer --tool "$tool" "${filter[@]}" --target-processes all --error-exitcode 1)
  [[ $tool == none ]] && sanitizer=()
  TILEC_CACHE_DIR=$(mktemp -d) timeout "${TILEC_SANITIZE_SECONDS:-540}" "${sanitizer[@]}" \
    "$python" -m pytest -q -rfEs -p no:cacheprovider "${part[@]}" >"$LOGS/sanitize_${tool}_$s.log" 2>&1 &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done

logs=("$LOGS"/sanitize_"${tool}"_*.log)
# pytest -q's last line, e.g. "70 passed, 2 skipped in 81.20s"
count() { grep -hE ' in [0-9.]+s' "${logs[@]}" | grep -oE "[0-9]+ $1" | awk '{n += $1} END {print n + 0}'; }
errors=$(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]+ (errors?|hazards?)' "${logs[@]}" \
  | awk '{n += $3} END {print n + 0}')
printf '%-10s %d tests in %d shards: %d passed, %d skipped, %d failed, %d errors; tool errors %d; shards not clean %d\n' \
  "$tool" "${#tests[@]}" "${#pids[@]}" "$(count passed)" "$(count skipped)" "$(count failed)" "$(count error)" \
  "$errors" "$failed"
(( failed == 0 ))
