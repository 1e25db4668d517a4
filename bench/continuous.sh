#!/usr/bin/env bash
# Continuous mode against its target (issue 6, DESIGN §7): a finding at most 3 steps after
# its onset and within 3 s of those steps' records. Streams a simulated job into a real
# argusd over loopback at the job's own pace (one session per rank, one step per batch, as
# a live job sends them), with a compute straggler and a link degradation, then prints what
# argusd's monitor recorded (`findings(job)`): for each finding how many steps the job had
# run past the onset when it was recorded, and its lag; and the monitor's passes.
#   bench/continuous.sh [build_dir=build] [dp=32] [steps_per_second=2.5] [steps=150]
# Ranks: tensor-parallel 8 x pipeline 4 x dp (dp 32: 1,024 ranks). Not a test: it asserts
# nothing, the machine's noise is in the figures (the simulator shares its cores).
set -euo pipefail
build=${1:-build}
dp=${2:-32}
rate=${3:-2.5}
steps=${4:-150}
tmp=$(mktemp -d)
trap 'kill "$argusd_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$build/argusd" --data "$tmp/data" --ingest 127.0.0.1:0 --http 127.0.0.1:0 >"$tmp/argusd.out" 2>"$tmp/argusd.err" &
argusd_pid=$!
for _ in $(seq 100); do grep -q "http listening" "$tmp/argusd.out" 2>/dev/null && break; sleep 0.1; done
ingest=$(sed -n 's/^argusd: ingest listening on //p' "$tmp/argusd.out")
http=$(sed -n 's/^argusd: http listening on //p' "$tmp/argusd.out")

ranks=$((8 * 4 * dp))
straggle_at=$((steps / 2 - 5))
link_at=$((steps * 3 / 4 - 2))
echo "continuous mode: $ranks ranks, $steps steps at $rate steps/s; compute_straggler at step $straggle_at, link_degradation at step $link_at"
"$build/argus" simulate --job live --server "$ingest" --tp 8 --pp 4 --dp "$dp" --steps "$steps" --block 1 \
  --steps-per-second "$rate" --fault "compute_straggler:rank=$((ranks * 3 / 5)),at=$straggle_at,for=30" \
  --fault "link_degradation:hosts=$((ranks / 32))-$((ranks / 32 + 1)),at=$link_at,for=30"
sleep 2  # the last steps' pass

"$build/argus" query --server "$http" \
  "SELECT kind, from_step AS onset, steps_after_onset, lag_s FROM findings('live') ORDER BY from_step"
exec 3<>"/dev/tcp/${http%:*}/${http##*:}"  # no curl needed
printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$http" >&3
cat <&3 | grep -E '^argus_diagnosis_(passes_total|errors_total|pass_seconds|steps_fed_total|window_reads_total)'
