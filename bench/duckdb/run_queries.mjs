// The DuckDB side of bench_query_vs_duckdb (bench/query_vs_duckdb.sh installs
// @duckdb/node-api next to a copy of this file, under the build dir).
//
//   node run_queries.mjs plan.json
//
// plan.json (written by the bench): {threads, runs, setup: [sql...], queries: [{name, sql,
// answer}]}. Loads the rows into an in-memory DuckDB with the setup statements, runs each
// query `runs` times after one warm-up run and prints, on stdout, JSON:
//   {"version", "threads", "load_s", "queries": [{"name", "median_s", "rows", "answer"}]}
// Each query's answer is written once more, untimed, to its `answer` CSV file (no header)
// for the bench to compare. Timing covers execution and materialization inside DuckDB
// (connection.run), not conversion of the rows to JavaScript.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const instance = await DuckDBInstance.create(':memory:');
const db = await instance.connect();
await db.run(`SET threads = ${plan.threads}`);

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let t0 = process.hrtime.bigint();
for (const sql of plan.setup) await db.run(sql);
const load_s = seconds(t0);

const queries = [];
for (const q of plan.queries) {
  await db.run(q.sql);  // untimed warm-up, as on the Argus side
  const times = [];
  let rows = 0;
  for (let i = 0; i < plan.runs; ++i) {
    t0 = process.hrtime.bigint();
    const result = await db.run(q.sql);
    times.push(seconds(t0));
    rows = result.rowCount;
  }
  const path = q.answer.replaceAll("'", "''");
  await db.run(`COPY (${q.sql}) TO '${path}' (FORMAT csv, HEADER false)`);
  queries.push({ name: q.name, median_s: median(times), rows, answer: q.answer });
}

const version = (await db.runAndReadAll('SELECT version()')).getRows()[0][0];
process.stdout.write(JSON.stringify({ version, threads: plan.threads, load_s, queries }) + '\n');
