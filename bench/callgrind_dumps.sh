# Sourced by the bench/callgrind_*.sh scripts: runs one benchmark under callgrind with
# instrumentation off at start (the benchmark turns it on around what it measures and
# dumps one profile per labelled section through <valgrind/callgrind.h>).
#
# callgrind_dumps OUT PROGRAM ARGS...
#   OUT/stdout.tsv  the program's stdout (its labelled sections, in its own format)
#   OUT/dumps.tsv   one "label<TAB>instructions" line per dump, the label taken from the
#                   dump's "desc: Trigger: Client Request: <label>" and the count from "totals:"
# Exits on a valgrind failure, after printing its log.
callgrind_dumps() {
  local out=$1
  shift
  valgrind --tool=callgrind --instr-atstart=no --dump-instr=yes --callgrind-out-file="$out/callgrind.out.%p" \
    "$@" >"$out/stdout.tsv" 2>"$out/valgrind.log" || { cat "$out/valgrind.log" >&2; exit 1; }
  local f
  for f in "$out"/callgrind.out.*.*; do
    printf '%s\t%s\n' "$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")" "$(sed -n 's/^totals: //p' "$f")"
  done >"$out/dumps.tsv"
}
