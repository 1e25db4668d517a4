#!/usr/bin/env bash
# The capture shim on a real GPU (docs/capture/gpu-check.md): starts a local argusd, runs
# bench/gpu/train_loop.py untraced, under `argus capture` and under torch.profiler,
# alternating (each round rotates the order), for two shapes: `train` (bf16 MLP stack, a
# GPU-bound step of ~10 ms with a few hundred kernels) and `small` (the same loop, tiny
# matrices: launch-bound). Then one run under both the shim and torch.profiler. Prints
# `check: NAME VALUE` lines (bench/gpu/summarize.py): step times and ratios per mode,
# kernels per step as stored and as torch.profiler saw them, bytes per rank-step on the
# wire, the phase attribution that shows CUPTI's correlation records joined, and whether
# the two tracers coexist. Asserts nothing: the figures are the result.
#
# Usage (repository root): bash bench/gpu/check.sh
#   Through the device tool, after `bash bench/gpu/pack.sh` here:
#   run(command="bash bench/gpu/check.sh", carry=[".gpu-pack"], timeout_s=600)
# Binaries: .gpu-pack/bin (bench/gpu/pack.sh) when present, else $ARGUS_BUILD (default
# build-gpu) when it holds argus, argusd and libargus_capture.so, else a CMake build into it.
# Environment: GPU_CHECK_ROUNDS (4), GPU_CHECK_STEPS (200 measured steps per run, after 30
# warm-up steps), GPU_CHECK_BUDGET_S (420: no round starts that would end past it),
# GPU_CHECK_SHAPES ("train small"; "train" alone for more rounds of the overhead breakdown),
# GPU_CHECK_EXTRAS (1; 0 skips the coexistence and NCCL runs), PYTHON (python3). With $OUT
# set: $OUT/check.txt (the check lines), $OUT/check.log (everything printed),
# $OUT/runs.tar.gz (run files and logs, /metrics snapshots, argusd's output).
# Exit codes: 0 ran, 3 no CUDA device (torch missing, or it sees no GPU), 4 no binaries and
# none could be built, 5 argusd did not start, 6 a run failed or timed out (the others are
# reported).
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${GPU_CHECK_ROUNDS:-4}
read -r -a shapes <<< "${GPU_CHECK_SHAPES:-train small}"
extras=${GPU_CHECK_EXTRAS:-1}
steps=${GPU_CHECK_STEPS:-200}
warmup=30
budget_s=${GPU_CHECK_BUDGET_S:-420}
py=${PYTHON:-python3}
build=${ARGUS_BUILD:-build-gpu}
run_timeout=120

tmp=""
runs=""
bin=""
ingest=""
http=""
argusd_pid=""
failed=()

# shellcheck disable=SC2317  # called through the EXIT trap that main sets
finish() {
  local rc=$?
  if [ -n "$argusd_pid" ]; then kill "$argusd_pid" 2>/dev/null || true; wait "$argusd_pid" 2>/dev/null || true; fi
  if [ -n "${OUT:-}" ] && [ -n "$tmp" ]; then
    cp "$tmp"/argusd.* "$runs/" 2>/dev/null || true
    local keep=(runs)
    if [ -d "$tmp/data" ]; then keep+=(data); fi
    tar -czf "$OUT/runs.tar.gz" -C "$tmp" "${keep[@]}"
  fi
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
  exit "$rc"
}

# Sets cuda_rc and cuda (the device, or why there is none).
probe_cuda() {
  cuda_rc=0
  cuda=$(timeout 120 "$py" - 2>&1 <<'EOF'
import sys
try:
    import torch
except ImportError as e:
    print(f"torch missing ({e})")
    sys.exit(1)
if not torch.cuda.is_available():
    print(f"torch {torch.__version__} sees no GPU (torch.cuda.is_available() is false)")
    sys.exit(1)
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
EOF
  ) || cuda_rc=$?
}

have_bins() { [ -x "$1/argus" ] && [ -x "$1/argusd" ] && [ -f "$1/libargus_capture.so" ]; }

# Sets bin: the pack, else a build dir, else what a CMake build makes (exit 4 if it cannot).
find_bins() {
  if have_bins .gpu-pack/bin; then
    bin=.gpu-pack/bin
    echo "check: pack $(head -1 .gpu-pack/PACK.txt 2>/dev/null || echo 'without PACK.txt')"
  elif have_bins "$build"; then
    bin=$build
  else
    echo "check.sh: no .gpu-pack/bin and no built $build: building argus, argusd and libargus_capture.so with CMake"
    if ! timeout 60 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp/cmake.log" 2>&1 ||
       ! timeout 360 cmake --build "$build" -j "$(nproc)" --target argus argusd argus_capture_shared >>"$tmp/cmake.log" 2>&1; then
      grep -m5 -iE 'error|could not find|not found' "$tmp/cmake.log" || tail -5 "$tmp/cmake.log"
      echo "check: binaries none (cannot build here: see the lines above)"
      echo "check.sh: no binaries: run 'bash bench/gpu/pack.sh' on a machine with the build dependencies (Debian 12) and carry .gpu-pack" >&2
      exit 4
    fi
    bin=$build
  fi
  if ! "$bin/argusd" --help >/dev/null 2>"$tmp/bin.err" || ! "$bin/argus" --help >/dev/null 2>>"$tmp/bin.err"; then
    cat "$tmp/bin.err"
    echo "check: binaries $bin (they do not start: a shared library missing? ldd $bin/argusd)"
    exit 4
  fi
  if ! "$py" -c 'import sys; sys.exit(b"InitializeInjection\0" not in open(sys.argv[1], "rb").read())' "$bin/libargus_capture.so"; then
    echo "check: binaries $bin (libargus_capture.so has no CUPTI entry point: built without the CUDA toolkit)"
    exit 4
  fi
  echo "check: binaries $bin"
}

# Sets ingest and http: argusd on a temporary data dir, ports picked by the kernel.
start_argusd() {
  "$bin/argusd" --data "$tmp/data" --ingest 127.0.0.1:0 --http 127.0.0.1:0 >"$tmp/argusd.out" 2>"$tmp/argusd.err" &
  argusd_pid=$!
  for _ in $(seq 100); do grep -q "http listening" "$tmp/argusd.out" 2>/dev/null && break; sleep 0.1; done
  ingest=$(sed -n 's/^argusd: ingest listening on //p' "$tmp/argusd.out")
  http=$(sed -n 's/^argusd: http listening on //p' "$tmp/argusd.out")
  if [ -z "$ingest" ] || [ -z "$http" ]; then
    cat "$tmp/argusd.err"
    echo "check.sh: argusd did not start" >&2
    exit 5
  fi
}

# run CONFIG MODE ROUND: one train_loop.py process, its file $runs/CONFIG.MODE.ROUND.json;
# round r numbers its steps from r * 100000. MODE both = the shim and torch.profiler. A run
# that fails is named in failed and leaves no file; the others go on.
run() {
  local cfg=$1 mode=$2 round=$3
  local name="$cfg.$mode.$round" shape
  case $cfg in
    train) shape=(--layers 12 --width 1024 --tokens 8192) ;;
    small) shape=(--layers 12 --width 256 --tokens 256) ;;
    coexist) shape=(--layers 12 --width 1024 --tokens 8192 --kineto-trace "$tmp/kineto.json") ;;
    smoke) shape=(--layers 12 --width 1024 --tokens 8192) ;;
    comm) shape=(--layers 12 --width 1024 --tokens 8192 --allreduce 64) ;;
  esac
  local n=$steps w=$warmup
  if [ "$cfg" = smoke ]; then n=20 w=5; fi
  local cmd=("$py" bench/gpu/train_loop.py --out "$runs/$name.json" --steps "$n" --warmup "$w"
             --step-base $((round * 100000)) "${shape[@]}")
  # The shim's variants, each its own job: without the stack sampler, without launch
  # attribution, without CUPTI.
  local capture=(env ARGUS_VERBOSE=1 "$bin/argus" capture --server "$ingest" --job "gpu-check-$cfg")
  case $mode in
    profiler) cmd+=(--profiler) ;;
    shim) cmd=("${capture[@]}" -- "${cmd[@]}") ;;
    nostacks) cmd=(env ARGUS_STACK_HZ=0 "${capture[@]}-$mode" -- "${cmd[@]}") ;;
    nolaunch) cmd=(env ARGUS_LAUNCH_ATTRIBUTION=0 "${capture[@]}-$mode" -- "${cmd[@]}") ;;
    # Everything but CUPTI: CUDA never loads the shim as its injection (NVTX still does).
    nocupti) cmd=("${capture[@]}-$mode" -- env -u CUDA_INJECTION64_PATH "${cmd[@]}") ;;
    both) cmd=("${capture[@]}" -- "${cmd[@]}" --profiler) ;;
  esac
  if [ "$mode" = shim ]; then "$py" bench/gpu/summarize.py metrics "$http" "$runs/$name.before"; fi
  if ! timeout -k 10 "$run_timeout" "${cmd[@]}" >"$runs/$name.log" 2>&1; then
    tail -20 "$runs/$name.log"
    echo "check.sh: run $name failed or timed out (${run_timeout} s)"
    rm -f "$runs/$name.json"
    failed+=("$name")
    return
  fi
  if [ "$mode" = shim ]; then "$py" bench/gpu/summarize.py metrics "$http" "$runs/$name.after"; fi
  "$py" bench/gpu/summarize.py run "$runs/$name.json"
  # The shim's own lines (ARGUS_VERBOSE): libcupti, the API records chosen, its counters.
  if [ "$mode" != untraced ] && [ "$mode" != profiler ]; then sed -n "s/^argus: \(.*\)/check: $cfg.$mode.$round.shim \1/p" "$runs/$name.log"; fi
}

main() {
  trap finish EXIT
  tmp=$(mktemp -d)
  runs="$tmp/runs"
  mkdir -p "$runs"

  probe_cuda
  if [ "$cuda_rc" -ne 0 ]; then
    echo "check: cuda no: ${cuda:-$py did not answer}"
    echo "check.sh: no CUDA device: ${cuda:-$py did not answer}; nothing measured" >&2
    exit 3
  fi
  echo "check: cuda $cuda"
  find_bins
  start_argusd

  # A short run under the shim first: when capture fails outright, stop before the rounds
  # spend the device time, with what the run and argusd printed.
  run smoke shim 0
  if [ ${#failed[@]} -gt 0 ] || ! "$py" bench/gpu/summarize.py smoke "$runs/smoke.shim.0.json" "$http"; then
    tail -5 "$tmp/argusd.err"
    echo "check: failed_runs smoke (the shim's first run: see above)"
    exit 6
  fi

  # Each round runs every mode once per shape, the order rotating, while the budget lasts.
  # train also runs the shim's variants (what stack sampling, launch attribution and CUPTI cost).
  local train_modes=(untraced shim profiler nostacks nolaunch nocupti) small_modes=(untraced shim profiler)
  local round_s=0 round start k cfg modes
  for round in $(seq "$rounds"); do
    if [ "$round" -gt 1 ] && [ $((SECONDS + round_s)) -gt "$budget_s" ]; then
      echo "check.sh: stopping after $((round - 1)) rounds (another would pass ${budget_s} s)"
      break
    fi
    start=$SECONDS
    for cfg in "${shapes[@]}"; do
      if [ "$cfg" = train ]; then modes=("${train_modes[@]}"); else modes=("${small_modes[@]}"); fi
      for k in "${!modes[@]}"; do
        run "$cfg" "${modes[(round + k) % ${#modes[@]}]}" "$round"
      done
    done
    round_s=$((SECONDS - start))
  done
  if [ "$extras" != 0 ]; then
    run coexist both 1
    run comm shim 1  # NCCL in the loop: the shim's profiler plugin on a real NCCL
  fi

  "$py" bench/gpu/summarize.py report "$runs" "$http"
  echo "check.sh: done in ${SECONDS} s"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "check: failed_runs ${failed[*]}"
    exit 6
  fi
}

if [ -z "${OUT:-}" ]; then
  main
  exit
fi
rc=0
main 2>&1 | tee "$OUT/check.log" || rc=${PIPESTATUS[0]}
grep '^check:' "$OUT/check.log" >"$OUT/check.txt" || true
exit "$rc"
