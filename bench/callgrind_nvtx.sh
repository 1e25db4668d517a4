#!/usr/bin/env bash
# Instructions per NVTX call pair (or call) on a training thread with Argus attached
# (callgrind): bench_nvtx_source --callgrind turns instrumentation on only around each case's
# loop (names already cached, the thread's ring attached; drained outside) and dumps one
# profile per case. The count is stable where the timings of bench_nvtx_source are not.
#
# Usage: bench/callgrind_nvtx.sh [build_dir=build] [iterations=20000]
# KEEP=DIR keeps the dumps for callgrind_annotate. Needs valgrind and <valgrind/callgrind.h>.
set -euo pipefail
build=${1:-build}
n=${2:-20000}

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/callgrind_dumps.sh"
# stdout.tsv: "callgrind-case<TAB>label<TAB>unit<TAB>iterations".
callgrind_cases "$out" "$build/bench/bench_nvtx_source" --callgrind "$n"
