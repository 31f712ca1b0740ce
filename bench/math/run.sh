#!/bin/sh
# Time to first result of the math tool vs bare python3 (see README.md).
# Usage: bench/math/run.sh [-n runs] [-python /path/to/python3]
set -e
cd "$(dirname "$0")/../.."
exec go run ./bench/math "$@"
