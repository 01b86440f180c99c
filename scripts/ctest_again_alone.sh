#!/usr/bin/env bash
# ctest in build folder DIR (scripts/fuzz.sh's sanitized suite), a failed test run again alone:
#
#   scripts/ctest_again_alone.sh DIR [ctest options...]
#
# A test that fails again fails the run (exit 1), and the output's end names it with the lines
# that say why. One that passes alone failed only beside the others (the machine's load, a
# sibling test's files): it is named as "not reproduced alone", as jit_mutants names a finding
# its run alone doesn't reproduce, and the run passes. Every line of that verdict starts with
# "fuzz.sh:", which .ci/run's summary keeps.
set -uo pipefail
dir=${1:?usage: scripts/ctest_again_alone.sh DIR [ctest options...]}
shift
ctest --test-dir "$dir" --output-on-failure "$@" && exit 0
again=$(mktemp)
trap 'rm -f "$again"' EXIT
status=0
if ctest --test-dir "$dir" --rerun-failed --output-on-failure > "$again" 2>&1; then
  echo "fuzz.sh: tests that failed beside the others and passed alone (not reproduced alone):"
else
  echo "fuzz.sh: tests that failed, and failed again alone:"
  status=1
fi
grep -a -E '^ *[0-9]+/[0-9]+ Test +#' "$again" | sed 's/^ */fuzz.sh:   /'
grep -a -E 'Failure|error:|ERROR|SUMMARY|Expected|Which is|actual|Value of' "$again" | head -20 |
  sed 's/^/fuzz.sh:     /'
exit "$status"
