#!/usr/bin/env bash
# Builds Argus and runs the whole test suite: the README's test command, and all of .ci/run.
#   1. installs the Debian packages it needs (scripts/install-deps.sh, idempotent)
#   2. a release build with warnings as errors -> every CTest test
#   3. an address/undefined-sanitizer debug build (no benchmarks) -> every CTest test again
#   4. the libFuzzer targets (clang), each fuzzed briefly from its corpus (scripts/fuzz.sh)
# Environment: ARGUS_JOBS (parallel build jobs, default: cores), ARGUS_SKIP_SANITIZE=1,
# ARGUS_SKIP_FUZZ=1, ARGUS_FUZZ_SECONDS (per target, default here 10).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

jobs=${ARGUS_JOBS:-$(nproc)}
# The three build trees (release, sanitizers, fuzz) take about 4 GB: say so up front where
# the disk has less, rather than leave it to a linker's "No space left on device".
free_mb=$(df -Pm . | awk 'NR == 2 { print $4 }')
if [ "${free_mb:-0}" -lt 4096 ]; then
  echo "scripts/test.sh: warning: ${free_mb} MB free here; the build trees take about 4 GB" >&2
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

if [ "${ARGUS_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DARGUS_SANITIZE=ON -DARGUS_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== all tests under address and undefined-behaviour sanitizers (debug build) =="
  ctest --test-dir build-asan -j "$jobs" --output-on-failure
fi

if [ "${ARGUS_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== fuzz targets, ${ARGUS_FUZZ_SECONDS:-10} s each =="
  ARGUS_FUZZ_SECONDS=${ARGUS_FUZZ_SECONDS:-10} bash scripts/fuzz.sh
fi

# Last, so the log ends with CTest's summary of the whole suite.
echo "== all tests (release build) =="
ctest --test-dir build -j "$jobs" --output-on-failure
