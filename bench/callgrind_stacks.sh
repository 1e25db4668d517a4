#!/usr/bin/env bash
# Instructions per stack sample (callgrind): bench/stack_sample.py --callgrind under
# valgrind, instrumentation on only around the sampling rounds (two threads of ~20 Python
# frames each, steady state). Kernel work (the process_vm_readv and pread system calls) is
# not counted by callgrind: the ns figure of stack_sample.py includes it.
#
# Usage: bench/callgrind_stacks.sh [build_dir=build] [rounds=500] [python=python3]
# KEEP=DIR keeps the dumps for callgrind_annotate. Needs valgrind and <valgrind/callgrind.h>.
set -euo pipefail
build=${1:-build}
n=${2:-500}
# The interpreter itself, not a wrapper script (pyenv's shims): valgrind follows no exec.
python=$("${3:-python3}" -c 'import sys; print(sys.executable)')

out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/callgrind_dumps.sh"
# stdout.tsv: "callgrind-case<TAB>label<TAB>unit<TAB>iterations".
callgrind_cases "$out" "$python" "$(dirname "$0")/stack_sample.py" "$build/tests/unit/capture_stacks/probe/libargus_stacks_probe.so" "$n" --callgrind
