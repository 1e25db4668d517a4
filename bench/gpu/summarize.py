# The figures of bench/gpu/check.sh, from its run files and from the argusd it ran against
# (HTTP API, docs/http/api.md). Standard library only: it runs under the GPU machine's python3.
#
#   summarize.py run RUN.json                one line: the run's median step time
#   summarize.py metrics HOST:PORT FILE      save argusd's /metrics text to FILE
#   summarize.py report RUNS_DIR HOST:PORT   print the "check: NAME VALUE" lines
#   summarize.py smoke RUN.json HOST:PORT    a smoke run's steps and kernels as stored;
#                                            exit 1 when none of its steps holds a kernel
#
# RUNS_DIR holds one train_loop.py output per run, named CONFIG.MODE.ROUND.json (MODE:
# untraced, shim, profiler; the coexistence run is coexist.both.1.json), and for each run
# under the shim the /metrics snapshots taken just before and after it, NAME.before and
# NAME.after. What each printed line means: docs/capture/gpu-check.md.
# Exit codes: 0 printed, 2 bad arguments, 1 argusd did not answer.
import json
import os
import re
import statistics
import sys
import urllib.error
import urllib.parse
import urllib.request

MODES = ("untraced", "shim", "profiler", "nostacks", "nolaunch", "nocupti")  # the last three: the shim without its stack sampler / launch attribution / CUPTI
OPS = ("other", "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send", "recv", "send_recv", "barrier")
PHASES = {0: "unknown", 1: "forward", 2: "backward", 3: "optimizer", 4: "data_load", 5: "communication", 6: "other"}
DROPPED_EVENTS = 3      # model::EventKind::kDroppedEvents
STEP_PARTIAL = 1 << 1   # model::kStepPartial
STEP_SPACING = 100000   # check.sh numbers round r's steps from r * 100000


def check(name, value):
    print(f"check: {name} {value}", flush=True)


def get(server, path, **params):
    url = f"http://{server}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read().decode()


def query(server, sql):
    """Rows of one statement through POST /api/v1/query (docs/http/api.md)."""
    req = urllib.request.Request(f"http://{server}/api/v1/query", data=json.dumps({"q": sql}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read().decode())["rows"]


def stack_checks(cfg, server):
    """The stack sampler in a real PyTorch process: the most sampled stacks of the shim runs,
    each as its share of the samples and its innermost Python frame (then the native leaf)."""
    job = f"gpu-check-{cfg}"
    rows = query(server, "SELECT n.frames, sum(s.samples) FROM stacks s JOIN stack_names n USING (job, stack_id) "
                         f"WHERE s.job = '{job}' GROUP BY n.frames ORDER BY sum(s.samples) DESC")
    total = sum(r[1] for r in rows)
    check(f"{cfg}.stack_samples", total)
    for i, (frames, samples) in enumerate(rows[:3]):
        parts = frames.split(";")
        python = [f for f in parts if not f.startswith("[")]
        where = (python[-1].split(" (")[0] if python else "?") + (f" {parts[-1]}" if parts[-1].startswith("[") else "")
        check(f"{cfg}.stack_top{i + 1}", f"{samples / total:.3f} {where.replace(' ', '_')}")


def parse_metrics(text):
    m = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            m[name] = float(value)
    return m


def scan(server, job, table, columns):
    try:
        body = get(server, "/api/v1/scan", job=job, table=table, columns=",".join(columns), limit=1000000)
    except urllib.error.HTTPError as e:
        if e.code == 404:  # job never written
            return []
        raise
    ans = json.loads(body)
    if ans["stats"]["truncated"]:
        raise RuntimeError(f"scan of {job}.{table} truncated at 1,000,000 rows")
    names = [c["name"] for c in ans["columns"]]
    return [dict(zip(names, row)) for row in ans["rows"]]


def fallback_phase(name):
    """The phase the assembler gives a kernel by its name alone (NameRules::defaults() kernel
    rules): what every kernel would get if no launch time and thread were joined."""
    n = name.lower()
    if n.startswith("[mem"):
        return 6
    if "nccl" in n:
        return 5
    if any(p in n for p in ("multi_tensor_apply", "adam", "sgd", "optimizer")):
        return 3
    if any(p in n for p in ("backward", "bwd", "grad")):
        return 2
    return 1


def load_runs(runs_dir):
    runs = {}
    for f in sorted(os.listdir(runs_dir)):
        m = re.fullmatch(r"([a-z]+)\.([a-z]+)\.(\d+)\.json", f)
        if m:
            with open(os.path.join(runs_dir, f)) as fh:
                runs[(m.group(1), m.group(2), int(m.group(3)))] = json.load(fh)
    return runs


def measured_steps(run):
    first = run["step_base"] + run["warmup"]
    return set(range(first, first + len(run["step_ns"])))


def timing(cfg, runs):
    """Median step time per mode (median over runs of each run's median) and the ratios."""
    med = {}
    for mode in MODES:
        per_run = [statistics.median(r["step_ns"]) for (c, m, _), r in runs.items() if c == cfg and m == mode]
        pooled = [t for (c, m, _), r in runs.items() if c == cfg and m == mode for t in r["step_ns"]]
        if not per_run:
            continue
        med[mode] = (statistics.median(per_run), statistics.fmean(pooled))
        check(f"{cfg}.step_ms.{mode}", f"{med[mode][0] / 1e6:.3f}")
        check(f"{cfg}.step_ms_mean.{mode}", f"{med[mode][1] / 1e6:.3f}")
        check(f"{cfg}.run_spread.{mode}", f"{(max(per_run) - min(per_run)) / statistics.median(per_run):.4f}")
    if "untraced" in med:
        base = med["untraced"]
        for mode in MODES[1:]:
            if mode in med:
                check(f"{cfg}.ratio.{mode}_vs_untraced", f"{med[mode][0] / base[0]:.4f}")
                check(f"{cfg}.ratio_mean.{mode}_vs_untraced", f"{med[mode][1] / base[1]:.4f}")
    return {m: v[0] for m, v in med.items()}


def profiler_kernels_per_step(runs, cfg, mode):
    events = sum(r["profiler"]["gpu_events"] for (c, m, _), r in runs.items() if c == cfg and m == mode)
    steps = sum(r["profiler"]["recorded_steps"] for (c, m, _), r in runs.items() if c == cfg and m == mode)
    return events / steps if steps else None


class Store:
    """What argusd stored for one job, restricted to the steps the runs measured."""

    def __init__(self, server, job, job_runs):
        self.server, self.job = server, job
        self.expected = sum(r["warmup"] + len(r["step_ns"]) for r in job_runs)
        self.measured = set().union(*(measured_steps(r) for r in job_runs)) if job_runs else set()
        self.steps = scan(server, job, "steps", ["step", "flags", "iter_ns"])
        self.kernels = [k for k in scan(server, job, "kernels", ["step", "signature", "phase", "count", "total_ns"])
                        if k["step"] in self.measured]
        self.events = scan(server, job, "events", ["step", "kind", "value"])
        self.names = {}

    def name(self, signature):
        if signature not in self.names:
            try:
                self.names[signature] = json.loads(get(self.server, "/api/v1/kernels", job=self.job, signature=signature))["name"]
            except urllib.error.HTTPError:
                self.names[signature] = ""
        return self.names[signature]

    def kernels_per_step(self):
        per_step = {s: 0 for s in self.measured}
        for k in self.kernels:
            per_step[k["step"]] += k["count"]
        return per_step

    def time_by(self, key):
        out = {}
        for k in self.kernels:
            out[key(k)] = out.get(key(k), 0) + k["total_ns"]
        return out


def store_checks(cfg, server, runs, snapshots, prof_kps):
    job = f"gpu-check-{cfg}"
    shim_runs = [r for (c, m, _), r in runs.items() if c == cfg and m == "shim"]
    st = Store(server, job, shim_runs)
    check(f"{cfg}.steps_stored", f"{len(st.steps)} of {st.expected}")
    check(f"{cfg}.steps_partial", sum(1 for s in st.steps if s["flags"] & STEP_PARTIAL))
    check(f"{cfg}.dropped_events", sum(e["value"] for e in st.events if e["kind"] == DROPPED_EVENTS))
    iters = [s["iter_ns"] for s in st.steps if s["step"] in st.measured]
    if iters:
        check(f"{cfg}.iter_ms_stored", f"{statistics.median(iters) / 1e6:.3f}")
    kps = list(st.kernels_per_step().values())
    check(f"{cfg}.kernels_per_step.shim", statistics.median(kps) if kps else 0)
    if prof_kps is not None:
        check(f"{cfg}.kernels_per_step.profiler", f"{prof_kps:.1f}")

    # Bytes per rank-step on the wire, from argusd's ingest counters around each shim run.
    d = {"records": 0.0, "record_bytes": 0.0, "frame_bytes": 0.0}
    for before, after in snapshots:
        for k in d:
            d[k] += after.get(f"argus_ingest_{k}_total", 0) - before.get(f"argus_ingest_{k}_total", 0)
    record_bytes = d["record_bytes"] / d["records"] if d["records"] else None
    if record_bytes is not None:
        check(f"{cfg}.record_bytes_per_rank_step", f"{record_bytes:.0f}")
        check(f"{cfg}.session_bytes_per_rank_step", f"{d['frame_bytes'] / d['records']:.0f}")

    # Phases: the share of kernel time per stored phase; the share whose stored phase differs
    # from the kernel-name fallback (only a joined launch time can move it); the probe's.
    total = sum(k["total_ns"] for k in st.kernels)
    by_phase = st.time_by(lambda k: k["phase"])
    for p in (1, 2, 3):
        check(f"{cfg}.phase_share.{PHASES[p]}", f"{by_phase.get(p, 0) / total:.3f}" if total else "n/a")
    check(f"{cfg}.phase_share.other", f"{sum(v for p, v in by_phase.items() if p not in (1, 2, 3)) / total:.3f}" if total else "n/a")
    moved = sum(k["total_ns"] for k in st.kernels if k["phase"] != fallback_phase(st.name(k["signature"])))
    launch_share = moved / total if total else 0.0
    check(f"{cfg}.launch_attributed_share", f"{launch_share:.3f}")
    probe = [k for k in st.kernels if "scan" in st.name(k["signature"]).lower()]
    probe_total = sum(k["total_ns"] for k in probe)
    probe_share = sum(k["total_ns"] for k in probe if k["phase"] == 3) / probe_total if probe_total else 0.0
    check(f"{cfg}.probe_kernels_per_step", f"{sum(k['count'] for k in probe) / len(st.measured):.1f}" if st.measured else 0)
    check(f"{cfg}.probe_thread_attributed", f"{probe_share:.3f}")
    ok = launch_share >= 0.2 and probe_share >= 0.9
    check(f"{cfg}.external_correlation", "yes" if ok else "no")
    return {"record_bytes": record_bytes, "kernels_per_step": statistics.median(kps) if kps else 0, "external_correlation": ok}


def coexist_checks(server, runs, train_prof_kps, train_record_bytes):
    run = runs.get(("coexist", "both", 1))
    if run is None:
        check("coexist.ran", "no")
        return None
    p = run["profiler"]
    kps = p["gpu_events"] / p["recorded_steps"] if p["recorded_steps"] else 0.0
    check("coexist.profiler_kernels_per_step", f"{kps:.1f}")
    prof_ok = train_prof_kps is not None and kps >= 0.9 * train_prof_kps
    check("coexist.profiler_kept_gpu_events", "yes" if prof_ok else "no")
    st = Store(server, "gpu-check-coexist", [run])
    per_step = st.kernels_per_step()
    check("coexist.shim_steps_stored", f"{len(st.steps)} of {st.expected}")
    check("coexist.shim_steps_with_kernels", f"{sum(1 for n in per_step.values() if n > 0)} of {len(per_step)}")
    check("coexist.shim_kernels_per_step", statistics.median(per_step.values()) if per_step else 0)
    if p["kineto_json_steps"]:
        kineto = p["kineto_json_bytes"] / p["kineto_json_steps"]
        check("coexist.kineto_json_bytes_per_step", f"{kineto:.0f}")
        if train_record_bytes:
            check("train.compression_vs_kineto_json", f"{kineto / train_record_bytes:.0f}")
    return {"profiler_ok": prof_ok, "shim_steps_with_kernels": sum(1 for n in per_step.values() if n > 0), "steps": len(per_step)}


def comm_checks(server, runs):
    """The NCCL profiler plugin against a real NCCL: the collectives stored for the comm run
    (one all_reduce a step through a one-rank NCCL communicator)."""
    run = runs.get(("comm", "shim", 1))
    if run is None:
        check("comm.ran", "no")
        return
    measured = measured_steps(run)
    rows = [r for r in scan(server, "gpu-check-comm", "collectives", ["step", "op", "count", "bytes", "total_ns", "wait_ns"])
            if r["step"] in measured]
    steps_with = {r["step"] for r in rows}
    check("comm.steps_with_collectives", f"{len(steps_with)} of {len(measured)}")
    ops = sorted({OPS[r["op"]] if 0 <= r["op"] < len(OPS) else str(r["op"]) for r in rows})
    check("comm.ops", ",".join(ops) if ops else "none")
    if rows:
        per_step = {}
        for r in rows:
            c, b, t = per_step.get(r["step"], (0, 0, 0))
            per_step[r["step"]] = (c + r["count"], b + r["bytes"], t + r["total_ns"])
        check("comm.collectives_per_step", statistics.median(v[0] for v in per_step.values()))
        check("comm.bytes_per_step", f"{statistics.median(v[1] for v in per_step.values()):.0f} (all_reduce of {run.get('allreduce_bytes', 0)})")
        check("comm.collective_us_per_step", f"{statistics.median(v[2] for v in per_step.values()) / 1e3:.1f}")
        check("comm.wait_known_share", f"{sum(1 for r in rows if r['wait_ns'] >= 0) / len(rows):.3f}")


def report(runs_dir, server):
    runs = load_runs(runs_dir)
    if not runs:
        check("runs", "none")
        return
    first = next(iter(runs.values()))
    check("device", first["device"].replace(" ", "_"))
    check("torch", first["torch"])
    summary = []
    results = {}
    for cfg in sorted({c for (c, _, _) in runs if c not in ("coexist", "comm") and not c.startswith("smoke")}):
        med = timing(cfg, runs)
        prof_kps = profiler_kernels_per_step(runs, cfg, "profiler")
        snaps = []
        for (c, m, rnd) in sorted(runs):
            base = os.path.join(runs_dir, f"{c}.{m}.{rnd}")
            if c == cfg and m == "shim" and os.path.exists(base + ".after"):
                with open(base + ".before") as b, open(base + ".after") as a:
                    snaps.append((parse_metrics(b.read()), parse_metrics(a.read())))
        results[cfg] = (med, prof_kps, store_checks(cfg, server, runs, snaps, prof_kps))
        stack_checks(cfg, server)
        if "untraced" in med:
            parts = [f"{cfg}: {med['untraced'] / 1e6:.2f} ms/step untraced"]
            for mode in MODES[1:]:
                if mode in med:
                    parts.append(f"{mode} {100 * (med[mode] / med['untraced'] - 1):+.2f}%")
            summary.append(", ".join(parts))
    comm_checks(server, runs)
    train = results.get("train")
    co = coexist_checks(server, runs, train[1] if train else None, train[2]["record_bytes"] if train else None)
    if train:
        s = train[2]
        summary.append(f"kernels/step {s['kernels_per_step']} (profiler {train[1] or 0:.0f}), "
                       f"{s['record_bytes'] or 0:.0f} B/rank-step, external correlation {'yes' if s['external_correlation'] else 'no'}")
    if co:
        summary.append(f"with torch.profiler: profiler kept its GPU events {'yes' if co['profiler_ok'] else 'no'}, "
                       f"shim kernels in {co['shim_steps_with_kernels']} of {co['steps']} steps")
    check("summary", "; ".join(summary) + " (overhead target < 1%)")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        with open(sys.argv[2]) as f:
            r = json.load(f)
        name = os.path.basename(sys.argv[2]).removesuffix(".json")
        print(f"{name}: median {statistics.median(r['step_ns']) / 1e6:.3f} ms/step over {len(r['step_ns'])} steps")
    elif len(sys.argv) == 4 and sys.argv[1] == "metrics":
        text = get(sys.argv[2], "/metrics")
        with open(sys.argv[3], "w") as f:
            f.write(text)
    elif len(sys.argv) == 4 and sys.argv[1] == "smoke":
        cfg = os.path.basename(sys.argv[2]).split(".")[0]
        with open(sys.argv[2]) as f:
            st = Store(sys.argv[3], f"gpu-check-{cfg}", [json.load(f)])
        per_step = st.kernels_per_step()
        check(f"{cfg}.steps_stored", f"{len(st.steps)} of {st.expected}")
        check(f"{cfg}.kernels_per_step", statistics.median(per_step.values()) if per_step else 0)
        sys.exit(0 if any(per_step.values()) else 1)
    elif len(sys.argv) == 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        print("usage: summarize.py run RUN.json | metrics HOST:PORT FILE | report RUNS_DIR HOST:PORT", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    try:
        main()
    except (urllib.error.URLError, ConnectionError) as e:
        print(f"summarize: argusd did not answer: {e}", file=sys.stderr)
        sys.exit(1)
