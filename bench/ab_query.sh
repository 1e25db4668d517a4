#!/usr/bin/env bash
# Two builds of bench_query_runs side by side on one store: runs one statement on each
# alternately, `rounds` times, and prints each round's median wall seconds (of `runs` warm
# runs), then each binary's minimum and median and the median of the rounds' ratios (new /
# old). Wall time, not instructions: callgrind's counts (bench/callgrind_query.sh) miss what
# the CPU pays beside them; libxxhash's AVX-512 checksum halved a chunk's hash instructions
# and cost a scan 27% of its wall time (storage/chunk_format.cpp).
#   bench/ab_query.sh OLD_BINARY NEW_BINARY DATA_DIR "SQL" [rounds=4] [runs=9] [threads=1]
# Copy the old binary aside before rebuilding (cp build/bench/bench_query_runs /tmp/old);
# DATA_DIR is a store such as the one `bench_query_vs_duckdb keep=1` leaves. Not a test: it
# asserts nothing.
set -euo pipefail
old=$1
new=$2
data=$3
sql=$4
rounds=${5:-4}
runs=${6:-9}
threads=${7:-1}

wallS() {  # the median wall seconds bench_query_runs prints last
  "$1" data="$data" sql="$sql" runs="$runs" threads="$threads" | awk '/^median of/ { print $4 }'
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%-6s %10s %10s %8s\n' round "old s" "new s" "new/old"
for r in $(seq "$rounds"); do
  a=$(wallS "$old")
  b=$(wallS "$new")
  awk -v r="$r" -v a="$a" -v b="$b" 'BEGIN { printf "%-6s %10s %10s %8.3f\n", r, a, b, b / a }'
  echo "$a $b" >>"$tmp"
done
awk '
  function median(v, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { n++; a[n] = $1; b[n] = $2; q[n] = $2 / $1; if (n == 1 || $1 < amin) amin = $1; if (n == 1 || $2 < bmin) bmin = $2 }
  END {
    printf "old: min %.4f, median %.4f s\n", amin, median(a, n)
    printf "new: min %.4f, median %.4f s\n", bmin, median(b, n)
    printf "median of the rounds'"'"' new/old: %.3f\n", median(q, n)
  }' "$tmp"
