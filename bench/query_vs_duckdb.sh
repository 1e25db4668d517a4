#!/usr/bin/env bash
# Argus's query engine against DuckDB on the same rows, in one run (issue 5): per-step max
# and median step time across ranks; average compute per rank over a 61-step window, top 5;
# a per-rank rolling 21-step median over 200 steps; a kernel-histogram p99 per rank over
# 100 steps. Prints each latency (Argus: embedded, scans and GROUP BY on one thread per core; DuckDB: in memory, 2
# threads), the ratio Argus/DuckDB, Argus's values scanned per second per core and the
# targets; exits 1 when the engines' answers differ. A query Argus does not support yet
# prints "unsupported: <error>" and does not fail.
#
# Usage: bench/query_vs_duckdb.sh [ranks=10240] [steps=1000] [runs=7]
# BUILD=DIR (default build) is configured and bench_query_vs_duckdb built there if needed;
# @duckdb/node-api (version pinned in bench/duckdb/package.json) is installed by npm under
# $BUILD/duckdb. DATA=DIR (default /tmp/argus-vs-duckdb) holds the store and the CSV files
# DuckDB loads, removed at the end. More knobs: bench_query_vs_duckdb's own arguments
# (kernel_steps, signatures), see bench/query_vs_duckdb.cpp.
set -euo pipefail
ranks=${1:-10240}
steps=${2:-1000}
runs=${3:-7}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
data=${DATA:-/tmp/argus-vs-duckdb}

if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if ! log=$(cmake --build "$build" --target bench_query_vs_duckdb 2>&1); then
  echo "$log" >&2
  exit 1
fi

# DuckDB's module resolves from the script's own folder: install next to a copy of it.
duck="$build/duckdb"
mkdir -p "$duck"
cp "$root/bench/duckdb/package.json" "$root/bench/duckdb/run_queries.mjs" "$duck/"
if [ ! -d "$duck/node_modules/@duckdb/node-api" ]; then
  (cd "$duck" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

trap 'rm -rf "$data"' EXIT  # also when the bench fails or is interrupted midway
"$build/bench/bench_query_vs_duckdb" ranks="$ranks" steps="$steps" runs="$runs" dir="$data" \
  duckdb="node $duck/run_queries.mjs"
