#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang and runs each one on its corpus.
#   scripts/fuzz.sh                 build, then fuzz every target for ARGUS_FUZZ_SECONDS
#   scripts/fuzz.sh TARGET...       only these targets (e.g. step_decoder_fuzz)
#   scripts/fuzz.sh --seeds         rewrite the generated seeds in tests/fuzz/corpus (reproducers,
#                                   regress-*, are kept)
#   scripts/fuzz.sh --help
# Environment:
#   ARGUS_FUZZ_SECONDS   seconds per target (default 20)
#   ARGUS_FUZZ_JOBS      targets fuzzed at once (default: cores)
#   ARGUS_JOBS           parallel build jobs (default: cores)
#   ARGUS_FUZZ_BUILD     build directory (default build-fuzz)
# Exits non-zero when any target crashes, leaks, trips a sanitizer or breaks an invariant;
# the input that did it is in $ARGUS_FUZZ_BUILD/artifacts/ (and the log next to it).
# New interesting inputs accumulate in $ARGUS_FUZZ_BUILD/corpus/<target>, never in the
# checked-in seeds. See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

seeds=0
targets=()
for arg in "$@"; do
  case "$arg" in
    -h|--help|help) usage; exit 0 ;;
    --seeds) seeds=1 ;;
    -*) echo "fuzz.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done

all_targets=(step_decoder_fuzz duration_histogram_fuzz wire_client_fuzz wire_server_fuzz chunk_format_fuzz
             column_codec_fuzz hist_codec_fuzz sealed_block_fuzz meta_records_fuzz dump_fuzz auth_fuzz query_parser_fuzz
             grafana_fuzz)
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

seconds=${ARGUS_FUZZ_SECONDS:-20}
jobs=${ARGUS_JOBS:-$(nproc)}
fuzz_jobs=${ARGUS_FUZZ_JOBS:-$(nproc)}
build=${ARGUS_FUZZ_BUILD:-build-fuzz}

# Dependencies: the project's, plus clang and its libFuzzer/sanitizer runtimes (Debian 12
# ships clang 14). Idempotent, like install-deps.sh.
bash scripts/install-deps.sh clang libclang-rt-14-dev

# Every library is instrumented for coverage and the sanitizers; the fuzz targets add
# -fsanitize=fuzzer themselves (tests/fuzz/CMakeLists.txt). UBSan findings abort, so they
# count as crashes. Optimized but with assertions on (no -DNDEBUG): the decoders' "BUG:"
# asserts are invariants worth fuzzing. Warnings are not errors here: clang warns where g++
# does not (-Wunused-private-field), and the g++ build in scripts/test.sh owns -Werror.
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $san -fno-omit-frame-pointer" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $san -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$san" \
  -DARGUS_FUZZ=ON -DARGUS_WERROR=OFF >/dev/null

if [ "$seeds" = 1 ]; then
  cmake --build "$build" -j "$jobs" --target make_seeds
  "$build/tests/fuzz/make_seeds" tests/fuzz/corpus
  exit 0
fi

cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# libFuzzer writes new inputs into the first corpus directory: a scratch one in the build
# tree; the checked-in seeds come second, read only.
mkdir -p "$build/artifacts" "$build/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_one() {
  local t=$1
  mkdir -p "$build/corpus/$t"
  if "$build/tests/fuzz/$t" "$build/corpus/$t" "tests/fuzz/corpus/$t" \
      -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 >"$build/logs/$t.log" 2>&1; then
    echo "fuzz.sh: $t ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/logs/$t.log" | grep -o '[0-9]*$') runs)"
  else
    echo "fuzz.sh: $t FAILED; log: $build/logs/$t.log"
    grep -E 'ERROR|fuzz invariant|runtime error|SUMMARY|Test unit written' "$build/logs/$t.log" | head -20 | sed 's/^/  /'
    return 1
  fi
}

echo "== fuzzing ${#targets[@]} targets for ${seconds}s each, $fuzz_jobs at a time =="
failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$fuzz_jobs" ]; then
    wait "${pids[0]}" || failed=$((failed + 1))
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do
  wait "$p" || failed=$((failed + 1))
done
if [ "$failed" -gt 0 ]; then
  echo "fuzz.sh: $failed target(s) failed"
  exit 1
fi
echo "fuzz.sh: all ${#targets[@]} targets ran ${seconds}s without a crash"
