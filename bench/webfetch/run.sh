#!/usr/bin/env bash
# web_fetch performance goal: a 5 MB HTML page converts to text in under
# 100 ms.
#
#   bench/webfetch/run.sh [COUNT]     (default 5 repetitions of 20 iterations)
#
# Runs BenchmarkHTMLToText5MB (internal/tool/info) and prints, per run, the
# wall time and the CPU time (user+system of the process, GC included) per
# conversion, then the best of each against the 100 ms goal. Wall time on a
# busy shared machine swings with the load; CPU time much less.
set -euo pipefail

count=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

(cd "$repo" && go test -run '^$' -bench 'HTMLToText5MB' -benchtime 20x -count "$count" ./internal/tool/info) | tee "$out"
awk '
  /^BenchmarkHTMLToText5MB/ {
    for (i = 1; i <= NF; i++) {
      if ($(i+1) == "ns/op") wall = $i / 1e6
      if ($(i+1) == "cpu-ms/op") cpu = $i
    }
    if (bw == "" || wall < bw) bw = wall
    if (bc == "" || cpu < bc) bc = cpu
  }
  END {
    if (bw == "") { print "no benchmark result" > "/dev/stderr"; exit 1 }
    printf "best wall %.1f ms/page, best CPU %.1f ms/page (goal < 100 ms): %s\n", bw, bc, (bw < 100 ? "PASS" : "wall over goal (check the load average)")
  }' "$out"
