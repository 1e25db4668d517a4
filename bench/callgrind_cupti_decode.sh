#!/usr/bin/env bash
# Instructions per kernel record of the CUPTI source's decode (callgrind): bench_cupti_decode
# --callgrind turns instrumentation on only around one warm decode of each buffer (the real
# cuptiActivityGetNextRecord walk included) and dumps one profile per buffer.
#
# Usage: bench/callgrind_cupti_decode.sh [build_dir=build]
# KEEP=DIR keeps the dumps for callgrind_annotate. Needs valgrind and <valgrind/callgrind.h>.
set -euo pipefail
build=${1:-build}

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/callgrind_dumps.sh"
# stdout.tsv: "callgrind-stream<TAB>label<TAB>records<TAB>kernels".
callgrind_dumps "$out" "$build/bench/bench_cupti_decode" --callgrind
awk -F'\t' '
  NR == FNR { ir[$1] = $2; next }
  $1 == "callgrind-stream" {
    n = ir[$2]
    if (n == "") { printf "no dump for %s\n", $2 > "/dev/stderr"; exit 1 }
    printf "%-40s %9d %9d %13d %11.1f\n", $2, $3, $4, n, n / $4
  }
  BEGIN { printf "%-40s %9s %9s %13s %11s\n", "buffer", "records", "kernels", "instructions", "instr/kernel" }' "$out/dumps.tsv" "$out/stdout.tsv"
