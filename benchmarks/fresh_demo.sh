#!/usr/bin/env bash
# `make install && make demo` timed as a new user meets them: a fresh clone of HEAD in a new folder
# and pip's cache emptied (PIP_CACHE_DIR a new folder, so pyspark's wheel is built from source).
# Prints the seconds of each and their sum; the clone and its logs stay in OUT for the job times.
#
#   bash benchmarks/fresh_demo.sh [OUT]      # OUT defaults to a new folder under /tmp
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d /tmp/pelt-fresh-demo.XXXXXX)}"
git clone --quiet "$repo" "$out/clone"
export PIP_CACHE_DIR="$out/pip-cache"
cd "$out/clone"
t0=$(date +%s.%N)
make install > "$out/install.log" 2>&1
t1=$(date +%s.%N)
make demo > "$out/demo.log" 2>&1
t2=$(date +%s.%N)
python3 -c "i, d = $t1 - $t0, $t2 - $t1; print(f'make install {i:.1f} s, make demo {d:.1f} s, in all {i + d:.1f} s ({(i + d) / 60:.2f} min)')"
echo "logs: $out/install.log, $out/demo.log (Snakemake's, with each job's start and end)"
