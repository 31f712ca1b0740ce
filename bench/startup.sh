#!/usr/bin/env bash
# Measures `turnstone --version` start-up time (goal: under 20 ms) and, as a
# reference peer in the same run, `true` started the same way.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/turnstone
(cd "$root" && go build -o "$bin" ./cmd/turnstone)
n=${N:-50}
measure() { # prints median milliseconds of n runs of "$@"
	for _ in $(seq "$n"); do
		s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
		echo $(( (e - s) / 1000 ))
	done | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
t=$(measure "$bin" --version)
r=$(measure true)
echo "turnstone --version: median ${t} ms over $n runs (goal < 20 ms)"
echo "/bin/true:           median ${r} ms (process start-up floor on this machine)"
