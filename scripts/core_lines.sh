#!/usr/bin/env bash
# Lines of the compiler core, by directory: CI prints them so growth is seen
# (and explained in the commit that causes it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
total=0
printf '%-22s %7s\n' "directory" "lines"
for dir in src/base src/frontend src/ir src/op src/target src/passes src/codegen src/runtime src/python src/tools \
           device python/tilec; do
  lines=$(find "$dir" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.py' \) -print0 |
          xargs -0 cat 2>/dev/null | wc -l)
  printf '%-22s %7d\n' "$dir" "$lines"
  total=$((total + lines))
done
printf '%-22s %7d\n' "total" "$total"
