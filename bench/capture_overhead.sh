#!/usr/bin/env bash
# Capture overhead on the NVTX CPU workload: runs capture_workload (4 ranks, a real
# loopback allreduce) alternately untraced and under `argus capture` against a real
# argusd, and prints the median step time of each and the median of the rounds' ratios
# (target <= 1.01).
#   bench/capture_overhead.sh [build_dir=build] [pairs=5] [steps=200] [work=20]
# Not a test: it asserts nothing, the machine's noise is in the figures.
set -euo pipefail
build=${1:-build}
pairs=${2:-5}
steps=${3:-200}
work=${4:-20}
workload="$build/tests/integration/capture_workload/capture_workload"
tmp=$(mktemp -d)
trap 'kill "$argusd_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$build/argusd" --data "$tmp/data" --ingest 127.0.0.1:0 >"$tmp/argusd.out" 2>"$tmp/argusd.err" &
argusd_pid=$!
for _ in $(seq 100); do grep -q "ingest listening" "$tmp/argusd.out" 2>/dev/null && break; sleep 0.1; done
server=$(sed -n 's/^argusd: ingest listening on //p' "$tmp/argusd.out")

# Median per-step time over all ranks of one run (ns).
median() { cat "$1"/rank-*.txt | awk '{print $6}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run() {  # run <plain|shim> <round>
  local out="$tmp/$1-$2"
  mkdir -p "$out"
  if [ "$1" = plain ]; then
    "$workload" --ranks 4 --steps "$steps" --work "$work" --out "$out"
  else
    "$build/argus" capture --server "$server" --job overhead -- "$workload" --ranks 4 --steps "$steps" --work "$work" --out "$out"
  fi
  median "$out"
}

plain_all=() shim_all=() ratios=()
for round in $(seq "$pairs"); do
  # Alternate which goes first, so drift in the machine's load hits both alike.
  if (( round % 2 )); then p=$(run plain "$round"); s=$(run shim "$round"); else s=$(run shim "$round"); p=$(run plain "$round"); fi
  plain_all+=("$p") shim_all+=("$s")
  ratios+=("$(awk -v p="$p" -v s="$s" 'BEGIN {printf "%.6f", s/p}')")
  awk -v r="$round" -v p="$p" -v s="$s" 'BEGIN {printf "round %d: untraced %.3f ms, captured %.3f ms, ratio %.4f\n", r, p/1e6, s/1e6, s/p}'
done
mp=$(printf '%s\n' "${plain_all[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
ms=$(printf '%s\n' "${shim_all[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
mr=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
# The pair's ratio is the figure: the machine's load moves both runs of a round alike, and
# moves the rounds apart (4.8 to 7.1 ms a step in one run here), which the medians of each
# side alone would carry into their ratio.
awk -v p="$mp" -v s="$ms" -v r="$mr" -v n="$pairs" 'BEGIN {printf "median of %d rounds: untraced %.3f ms/step, captured %.3f ms/step; median of the rounds ratios %.4f (target <= 1.01)\n", n, p/1e6, s/1e6, r}'
