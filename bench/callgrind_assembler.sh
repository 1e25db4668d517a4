#!/usr/bin/env bash
# Instructions per kernel event of the StepAssembler (callgrind), on the synthetic stream and
# on every real Kineto trace: bench_assembler --callgrind turns instrumentation on only around
# feeding each stream (fresh assembler, every event, flush) and dumps one profile per stream,
# so building the streams and reading the traces count for nothing.
#
# Usage: bench/callgrind_assembler.sh [build_dir=build] [steps=20] [kernels_per_step=4000] [trace_dir=/work/shared/data/kineto]
# KEEP=DIR keeps the dumps (callgrind.out.PID.N, one per stream, instruction-level) for
# callgrind_annotate. Needs valgrind and a bench built with <valgrind/callgrind.h>.
set -euo pipefail
build=${1:-build}
steps=${2:-20}
kernels_per_step=${3:-4000}
trace_dir=${4:-/work/shared/data/kineto}

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/callgrind_dumps.sh"
# stdout.tsv: "callgrind-stream<TAB>label<TAB>events<TAB>kernels".
callgrind_dumps "$out" "$build/bench/bench_assembler" --callgrind "$steps" "$kernels_per_step" "$trace_dir"
awk -F'\t' '
  NR == FNR { ir[$1] = $2; next }
  $1 == "callgrind-stream" {
    label = $2; events = $3; kernels = $4; n = ir[label]
    if (n == "") { printf "no dump for %s\n", label > "/dev/stderr"; exit 1 }
    line = sprintf("%-48s %9d %9d %13d %11.1f", label, events, kernels, n, kernels ? n / kernels : 0)
    if (label ~ /^synthetic/) { synth = line; next }
    print line
    te += events; tk += kernels; ti += n
  }
  BEGIN { printf "%-48s %9s %9s %13s %11s\n", "stream", "events", "kernels", "instructions", "instr/kernel" }
  END {
    printf "%-48s %9d %9d %13d %11.1f\n", "total (real traces)", te, tk, ti, tk ? ti / tk : 0
    print synth
  }' "$out/dumps.tsv" "$out/stdout.tsv"
