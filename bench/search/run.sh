#!/usr/bin/env bash
# Compare turnstone's search tool with ripgrep and GNU grep on $(go env GOROOT)/src.
#
#   bench/search/run.sh [RUNS]        (default 10 timed runs per tool and pattern)
#
# Builds bench/search/driver (the real tool: Prepare + Run, output to
# /dev/null), warms the page cache, then times each tool per pattern with
# hyperfine when it is installed, else with a loop over `date +%s%N`, and
# prints the mean wall time and the ratios turnstone/rg and turnstone/grep.
# Note: the tools differ slightly in what they search — rg skips hidden and
# .gitignored files, turnstone caps 200 matches per file (grep and rg here
# print every match), grep -I and turnstone skip binary files.
set -euo pipefail

runs=${1:-10}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
corpus=$(go env GOROOT)/src
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

(cd "$repo" && go build -o "$bin/tsearch" ./bench/search/driver)
command -v rg >/dev/null || { echo "rg (ripgrep) not installed" >&2; exit 1; }

patterns=(
  'func main'              # literal, moderate
  'errors\.New\("[a-z]+'   # regex with a required literal
  '[A-Z][a-z]+Error\('     # regex, literal only in the middle
  'xyzzyplugh'             # rare literal, no match
  'err'                    # common literal, huge output
)

# mean_ms CMD...: mean wall time in ms of RUNS runs (output discarded).
mean_ms() {
  if command -v hyperfine >/dev/null; then
    local json; json=$(mktemp)
    hyperfine -N -i --warmup 1 --runs "$runs" --export-json "$json" -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    awk -F: '/"mean"/ {gsub(/[ ,]/, "", $2); printf "%.1f\n", $2 * 1000; exit}' "$json"
    rm -f "$json"
    return
  fi
  "$@" >/dev/null 2>&1 || true # warm-up
  local total=0 t0 t1
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    total=$((total + t1 - t0))
  done
  awk -v t="$total" -v n="$runs" 'BEGIN { printf "%.1f\n", t / n / 1e6 }'
}

cd "$corpus"
# Warm the page cache.
grep -rIq zzzzzz-warm . || true
echo "corpus: $corpus ($(find . -type f | wc -l) files), runs: $runs, cpus: $(nproc)"
printf '%-24s %10s %10s %10s %9s %9s\n' pattern turnstone rg grep ts/rg ts/grep
for p in "${patterns[@]}"; do
  ts=$(mean_ms "$bin/tsearch" "$p" .)
  rgt=$(mean_ms rg -n "$p" .)
  gr=$(mean_ms grep -rn -I -E "$p" .)
  awk -v p="$p" -v a="$ts" -v b="$rgt" -v c="$gr" \
    'BEGIN { printf "%-24s %8.1fms %8.1fms %8.1fms %9.2f %9.2f\n", p, a, b, c, a / b, a / c }'
done
