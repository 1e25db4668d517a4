#!/usr/bin/env bash
# Two builds of bench_assembler side by side: runs them alternately, `rounds` times each, and
# prints each round's per-kernel figure over the real traces (bench/assembler.cpp: "kernel",
# steady minus steady without the kernel events), then the minimum and median of each binary
# and the median of the rounds' ratios (new / old). On a shared machine a single run's figure
# moves by 40% from one minute to the next; alternating rounds see the same noise, so the
# ratio is the figure to quote (with callgrind's instruction counts:
# bench/callgrind_assembler.sh).
#   bench/ab_assembler.sh OLD_BINARY NEW_BINARY [rounds=6] [steps=20] [passes=5] [trace_dir=/work/shared/data/kineto]
# Copy the old binary aside before rebuilding (cp build/bench/bench_assembler /tmp/old).
# Not a test: it asserts nothing.
set -euo pipefail
old=$1
new=$2
rounds=${3:-6}
steps=${4:-20}
passes=${5:-5}
trace_dir=${6:-/work/shared/data/kineto}

kernelNs() {  # the "kernel" column of the real traces' total line
  "$1" "$steps" 4000 "$passes" "$trace_dir" | awk '/^total \(real traces\)/ { print $10 }'
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%-6s %10s %10s %8s\n' round "old ns" "new ns" "new/old"
for r in $(seq "$rounds"); do
  a=$(kernelNs "$old")
  b=$(kernelNs "$new")
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
    printf "old: min %.1f, median %.1f ns per kernel\n", amin, median(a, n)
    printf "new: min %.1f, median %.1f ns per kernel\n", bmin, median(b, n)
    printf "median of the rounds'"'"' new/old: %.3f\n", median(q, n)
  }' "$tmp"
