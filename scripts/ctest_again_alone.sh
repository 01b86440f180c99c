#!/usr/bin/env bash
# ctest in build folder DIR (scripts/fuzz.sh's sanitized suite), a failed test run again alone:
#
#   scripts/ctest_again_alone.sh DIR [ctest options...]
#
# A test that fails again fails the run (exit 1), and the output's end names it with the lines
# that say why and the last lines it printed. One that passes alone failed only beside the others
# (the machine's load, a sibling test's files): it is named as "not reproduced alone", as
# jit_mutants names a finding its run alone doesn't reproduce, and the run passes.
#
# LeakSanitizer stops the process's threads to look for leaks at exit; where it cannot (it
# prints "LeakSanitizer has encountered a fatal error" and aborts), that is the tool failing, not
# a leak found. Such a test is run a third time without the leak check: it passes the run only if
# it passes then, and it is named either way. A leak LeakSanitizer does report still fails.
#
# Every line of the verdict starts with "fuzz.sh:", which .ci/run's summary keeps.
set -uo pipefail
dir=${1:?usage: scripts/ctest_again_alone.sh DIR [ctest options...]}
shift
ctest --test-dir "$dir" --output-on-failure "$@" && exit 0
again=$(mktemp)
without_leaks=$(mktemp)
trap 'rm -f "$again" "$without_leaks"' EXIT

say_why() {  # the lines of ctest's output in $1 that say why
  grep -a -E '^ *[0-9]+/[0-9]+ Test +#' "$1" | sed 's/^ */fuzz.sh:   /'
  grep -a -E 'Failure|error:|ERROR|SUMMARY|Expected|Which is|actual|Value of|terminate|Sanitizer|CHECK failed' \
    "$1" | head -20 | sed 's/^/fuzz.sh:     /'
  echo "fuzz.sh:   its last lines:"
  grep -a -v -E '^ *(Start +[0-9]+:|[0-9]+/[0-9]+ Test +#)|^$' "$1" | tail -25 | sed 's/^/fuzz.sh:     | /'
}

if ctest --test-dir "$dir" --rerun-failed --output-on-failure > "$again" 2>&1; then
  echo "fuzz.sh: tests that failed beside the others and passed alone (not reproduced alone):"
  grep -a -E '^ *[0-9]+/[0-9]+ Test +#' "$again" | sed 's/^ */fuzz.sh:   /'
  exit 0
fi
if grep -a -q 'LeakSanitizer has encountered a fatal error' "$again"; then
  echo "fuzz.sh: LeakSanitizer failed on its own (a fatal error of the tool, not a leak) in:"
  say_why "$again"
  if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      ctest --test-dir "$dir" --rerun-failed --output-on-failure > "$without_leaks" 2>&1; then
    echo "fuzz.sh: ...and passed without the leak check (not reproduced without LeakSanitizer)"
    exit 0
  fi
  echo "fuzz.sh: ...and failed without the leak check too:"
  say_why "$without_leaks"
  exit 1
fi
echo "fuzz.sh: tests that failed, and failed again alone:"
say_why "$again"
exit 1
