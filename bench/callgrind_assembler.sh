#!/usr/bin/env bash
# Instructions per kernel event of the StepAssembler (callgrind), on the synthetic stream and
# on every real Kineto trace, cold (a fresh assembler) and steady (one that already took the
# stream: see bench/assembler.cpp): bench_assembler --callgrind turns instrumentation on only
# around feeding a stream (every event, flush) and dumps one profile per stream and pass, so
# building the streams, reading the traces and the warming pass count for nothing.
#
# Usage: bench/callgrind_assembler.sh [build_dir=build] [steps=20] [kernels_per_step=4000] [trace_dir=/work/shared/data/kineto]
# KEEP=DIR keeps the dumps (callgrind.out.PID.N, one per stream and pass, instruction-level) for
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
    label = $2; events = $3; kernels = $4
    cold = ir["cold " label]; steady = ir["steady " label]; base = ir["steady-no-kernels " label]
    if (cold == "" || steady == "" || base == "") { printf "no dump for %s\n", label > "/dev/stderr"; exit 1 }
    line = sprintf("%-48s %8d %8d %9.1f %9.1f %9.1f %9.1f", label, events, kernels, kernels ? cold / kernels : 0,
                   kernels ? steady / kernels : 0, events ? steady / events : 0, kernels ? (steady - base) / kernels : 0)
    if (label ~ /^synthetic/) { synth = line; next }
    print line
    te += events; tk += kernels; tc += cold; ts += steady; tb += base
  }
  BEGIN {
    print "instructions per kernel event: all-in cold and steady, steady per event of the stream, and per kernel: steady"
    print "minus steady without the kernel events (bench/assembler.cpp explains each)"
    printf "%-48s %8s %8s %9s %9s %9s %9s\n", "stream", "events", "kernels", "cold", "steady", "per event", "kernel"
  }
  END {
    printf "%-48s %8d %8d %9.1f %9.1f %9.1f %9.1f\n", "total (real traces)", te, tk, tk ? tc / tk : 0, tk ? ts / tk : 0, te ? ts / te : 0,
           tk ? (ts - tb) / tk : 0
    print synth
  }' "$out/dumps.tsv" "$out/stdout.tsv"
