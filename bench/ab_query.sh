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

figure() {  # the median wall seconds bench_query_runs prints last
  "$1" data="$data" sql="$sql" runs="$runs" threads="$threads" | awk '/^median of/ { print $4 }'
}

source "$(dirname "$0")/ab_rounds.sh"
abRounds "$rounds" s "$old" "$new"
