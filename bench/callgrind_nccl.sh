#!/usr/bin/env bash
# Instructions per NCCL profiler plugin call sequence on NCCL's threads (callgrind):
# bench_nccl_plugin --callgrind turns instrumentation on only around each case's batches
# (the Drain empties the queue outside) and dumps one profile per case. The count is stable
# where the timings of bench_nccl_plugin are not.
#
# Usage: bench/callgrind_nccl.sh [build_dir=build] [iterations=20000]
# KEEP=DIR keeps the dumps for callgrind_annotate. Needs valgrind and <valgrind/callgrind.h>.
set -euo pipefail
build=${1:-build}
n=${2:-20000}

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/callgrind_dumps.sh"
# stdout.tsv: "callgrind-case<TAB>label<TAB>unit<TAB>iterations".
callgrind_cases "$out" "$build/bench/bench_nccl_plugin" --callgrind "$n"
