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

figure() {  # the "kernel" column of the real traces' total line
  "$1" "$steps" 4000 "$passes" "$trace_dir" | awk '/^total \(real traces\)/ { print $10 }'
}

source "$(dirname "$0")/ab_rounds.sh"
abRounds "$rounds" ns "$old" "$new"
