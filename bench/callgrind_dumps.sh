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

# callgrind_cases OUT PROGRAM ARGS...: callgrind_dumps, then a table of instructions per unit,
# one row per case the program printed as "callgrind-case<TAB>label<TAB>unit<TAB>iterations"
# (the label being its dump's trigger).
callgrind_cases() {
  local out=$1
  shift
  callgrind_dumps "$out" "$@"
  awk -F'\t' '
    NR == FNR { ir[$1] = $2; next }
    $1 == "callgrind-case" {
      n = ir[$2]
      if (n == "") { printf "no dump for %s\n", $2 > "/dev/stderr"; exit 1 }
      printf "%-58s %5s %12.1f\n", $2, $3, n / $4
    }
    BEGIN { printf "%-58s %5s %12s\n", "case", "per", "instructions" }' "$out/dumps.tsv" "$out/stdout.tsv"
}
