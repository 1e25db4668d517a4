#!/usr/bin/env bash
# Instructions of one query in steady state (callgrind): the query run 2 times, then 6 times,
# each in one `argus shell` on the data dir; (six - two) / 4 leaves out the start, the first
# run's reads from disk into the block cache and the plan's first allocations. Exact where the
# machine's wall-clock figures move by 40%: compare two binaries' counts on the same store
# (for example the one bench_query_vs_duckdb keeps with dir=DIR keep=1). The shell prints the
# answer, so a query with a large answer counts its printing too.
#
# Usage: bench/callgrind_query.sh ARGUS_BINARY DATA_DIR "SQL"
set -euo pipefail
bin=$1
data=$2
sql=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() {  # instructions of `n` runs
  for _ in $(seq "$1"); do printf '%s;\n' "$sql"; done > "$out/q$1.sql"
  valgrind --tool=callgrind --callgrind-out-file="$out/cg$1" "$bin" shell --timeout 10m --data "$data" < "$out/q$1.sql" > /dev/null 2> "$out/err$1" ||
    { cat "$out/err$1" >&2; exit 1; }
  callgrind_annotate "$out/cg$1" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
two=$(total 2)
six=$(total 6)
echo "instructions per query (steady): $(( (six - two) / 4 ))"
