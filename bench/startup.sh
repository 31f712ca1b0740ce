#!/usr/bin/env bash
# Measures `turnstone --version` start-up time (goal: under 20 ms), with
# /bin/true as the process start-up floor of the same machine in the same run.
# Uses `perf stat -r` when it works (no extra process per sample), else a
# date loop (which adds a `date` start to every sample; compare the floor).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/turnstone
(cd "$root" && go build -o "$bin" ./cmd/turnstone)
n=${N:-50}
if perf stat -r 2 true >/dev/null 2>&1; then
	measure() { perf stat -r "$n" "$@" 2>&1 >/dev/null | awk '/elapsed/ {printf "%.2f", $1*1000}'; }
	how="perf stat -r $n"
else
	measure() {
		for _ in $(seq "$n"); do
			s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
			echo $(( (e - s) / 1000 ))
		done | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
	}
	how="median of $n date-loop samples"
fi
t=$(measure "$bin" --version)
r=$(measure true)
echo "turnstone --version: ${t} ms ($how; goal < 20 ms)"
echo "true:                ${r} ms (process start-up floor)"
awk -v t="$t" -v r="$r" 'BEGIN {printf "ratio:               %.1fx the floor\n", t/r}'
