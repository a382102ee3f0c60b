"""Benchmark a gem5 run's fixed cost: what a run costs besides its region of interest.

For each machine, one run of a short fixed workload (``memlat`` at size smoke pinned to
CPU 0, O3 or the machine's detailed cores, fast-forward on, as campaigns run) through the
project's own runner, split by gem5's event lines (``gem5.json``):

- start to restored: gem5's start (configuration, board construction) to the checkpoint
  restored (``instantiated``);
- restored to region start: the restored guest up to the launcher's ``m5 workbegin``
  (Atomic cores): reading the run's payload, the runner's set-up, the topology report;
- region end to exit: ``m5 workend`` to ``m5 exit`` (Atomic cores): results and artifacts
  out of the guest;
- fixed cost: the whole gem5 process minus its region of interest.

The boot to the checkpoint is not counted (it happens once per machine and kernel); if the
checkpoint is missing it is made first and its time is reported apart.

    GEM5=/path/to/gem5.fast python3 bench/bench_fixed_cost.py --machines clovertown-e5320 \\
        --json bench/results/fixed-cost-<host>-<date>.json

``--request EXPERIMENT:K`` runs the K-th smoke-scale gem5 request of a campaign's experiment
instead of memlat (its own workloads, as the campaign runs them), e.g. a Hector run of
``brecht-fig1``; ``--warm-caches S`` runs the request with the caches bypassed until S
seconds before its region (RunRequest.warm_caches), to compare with the same request without;
``--warmup S`` gives its jobs a warm-up of S guest seconds instead of the experiment's:
with 0, restored to region start is the set-up alone (the warm-up is the experiment's, and
the base vectors it runs beside make it cost more host time per guest second than the set-up).

``--from-store DIR`` splits the finished gem5 runs of a results directory instead (a
campaign's own runs, no new simulation): the same phases, and for jobs with a warm-up its
share (the Atomic cores' warming run, part of the experiment rather than of the fixed
cost), read off gem5's progress lines at the tick where the warm-up began. That share is
interpolated linearly in guest time between the lines around it (one every 30 host seconds),
so where no line falls in the set-up it is too small: a busy warm-up costs more host time
per guest second than the set-up, which waits part of the time. ``--request ... --warmup 0``
measures the set-up alone. One record per run and a table of medians per machine, workloads
and CPU model.

Results go to the JSON file (one record per machine) and a markdown table on stdout;
bench/gem5.md ("Fixed cost per run") records the runs made on the project's hosts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records import (add_record_options, append_records, print_report,  # noqa: E402
                     report_files, results_dir)
from schedlab.campaigns.experiment import runnable  # noqa: E402
from schedlab.errors import UserError  # noqa: E402
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare  # noqa: E402

WORKLOAD = WorkloadRequest("memlat", size="smoke", cpus="0")


def split(gem5_json: dict) -> dict:
    """The phases of one run, in host seconds, from gem5's event lines."""
    events = gem5_json["events"]
    first = {}
    for e in events:
        first.setdefault(e["event"], e)
    begin, end, done = first["workbegin"], first["workend"], first["exit"]
    restore = first["instantiated"]["host_s"]
    total = gem5_json["host_seconds"]
    roi = end["host_s"] - begin["host_s"]
    return {"restore_s": restore,
            "restored_to_workbegin_s": round(begin["host_s"], 1),
            # Instructions since the restore (every core; gem5's counters start there):
            # the host-load-free measure of the same phases.
            "restored_to_workbegin_insts": begin["insts"],
            "workend_to_exit_s": round(done["host_s"] - end["host_s"], 1),
            "workend_to_exit_insts": done["insts"] - end["insts"],
            "roi_s": round(roi, 1),
            # The event lines count host seconds from after the restore: what the process
            # took besides them and the restore is gem5's start (the binary, Python, the
            # board's construction) and its end after the guest's m5 exit.
            "start_and_end_s": round(total - done["host_s"] - restore, 1),
            "gem5_process_s": round(total, 1),
            "fixed_s": round(total - roi, 1)}


def host_seconds_at(gem5_json: dict, tick: int) -> float:
    """Host seconds of the gem5 process when the guest reached ``tick``: interpolated
    between the event and progress lines (each has both clocks) around it."""
    points = sorted((p["tick"], p["host_s"]) for p in [*gem5_json["events"],
                                                       *gem5_json.get("progress", [])]
                    if "tick" in p and "host_s" in p)
    before = max((p for p in points if p[0] <= tick), default=points[0])
    after = min((p for p in points if p[0] >= tick), default=points[-1])
    if after[0] == before[0]:
        return before[1]
    return before[1] + (after[1] - before[1]) * (tick - before[0]) / (after[0] - before[0])


def from_run(run_dir: Path) -> dict | None:
    """The record of one finished gem5 run of a results directory (None if it is not one)."""
    try:
        info = json.loads((run_dir / "gem5.json").read_text())
        results = json.loads((run_dir / "results.json").read_text())
        spec = json.loads((run_dir / "spec.json").read_text())
    except (OSError, ValueError):
        return None
    if not results.get("ok") or "workbegin" not in {e["event"] for e in info["events"]}:
        return None
    phases = split(info)
    begin = next(e for e in info["events"] if e["event"] == "workbegin")
    warmup = max((j.get("warmup") or 0.0 for j in spec["request"]["jobs"]), default=0.0)
    warm_start = host_seconds_at(info, begin["tick"] - round(warmup * 1e12))
    warmup_s = round(begin["host_s"] - warm_start, 1) if warmup else 0.0
    facts = results["facts"]
    return {"machine": results["machine"], "cpu": info["cpu"], "source": "store",
            "run_id": run_dir.name,
            "workloads": "+".join(sorted({j["workload"] for j in spec["request"]["jobs"]})),
            "warmup_guest_s": warmup, "warm_caches": spec["request"].get("warm_caches"),
            **phases, "warmup_s": warmup_s,
            "fixed_less_warmup_s": round(phases["fixed_s"] - warmup_s, 1),
            "guest_uptime": {k: facts[k] for k in facts if k.startswith("uptime.")}}


def from_store(store: Path) -> list[dict]:
    """Records of every finished gem5 run in ``store`` (a results directory)."""
    runs = [r for d in sorted(store.iterdir()) if d.is_dir() and not d.name.startswith(".")
            for r in [from_run(d)] if r is not None]
    if not runs:
        raise SystemExit(f"{store}: no finished gem5 runs there (a results directory holds "
                         f"<run-id>/results.json and gem5.json)")
    return runs


STORE_COLUMNS = ("restore_s", "restored_to_workbegin_s", "warmup_s", "roi_s",
                 "workend_to_exit_s", "start_and_end_s", "gem5_process_s",
                 "fixed_less_warmup_s")


def store_table(records: list[dict]) -> str:
    """Medians per machine, workloads and CPU model (host seconds; n: runs)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["machine"], r["workloads"], r["cpu"], r["warmup_guest_s"],
                           "-" if r.get("warm_caches") is None else f"{r['warm_caches']:g}"),
                          []).append(r)
    lines = ["| machine | workloads | cpu | warm-up (guest s) | warm caches (s) | n | "
             + " | ".join(STORE_COLUMNS) + " |", "|" + "---|" * (len(STORE_COLUMNS) + 6)]
    for (machine, workloads, cpu, warmup, warm), rs in sorted(groups.items()):
        # Records made before a column existed lack it.
        medians = [f"{statistics.median(v):.1f}" if (v := [r[c] for r in rs if c in r]) else "-"
                   for c in STORE_COLUMNS]
        lines.append(f"| {machine} | {workloads} | {cpu} | {warmup:g} | {warm} | {len(rs)} | "
                     + " | ".join(medians) + " |")
    return "\n".join(lines)


def request_table(records: list[dict]) -> str:
    """One line per campaign request run (host seconds)."""
    cols = ("restore_s", "restored_to_workbegin_s", "restored_to_workbegin_insts",
            "warmup_s", "roi_s", "workend_to_exit_s", "start_and_end_s", "gem5_process_s",
            "fixed_less_warmup_s")
    lines = ["| machine | request | warm caches (s) | commit | " + " | ".join(cols) + " |",
             "|" + "---|" * (len(cols) + 4)]
    for r in records:
        label = ",".join(f"{k}={v}" for k, v in sorted(r.get("label", {}).items()))
        warm = "-" if r.get("warm_caches") is None else f"{r['warm_caches']:g}"
        lines.append(f"| {r['machine']} | {label} | {warm} | {r['commit']} | "
                     + " | ".join(str(r.get(c, "-")) for c in cols) + " |")
    return "\n".join(lines)


def git_head() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=Path(__file__).parent).stdout.strip()


# The commit whose code the runs use, read when the benchmark starts: a commit made while a
# run boots its checkpoint must not be credited with it.
COMMIT = git_head()


def run_once(request: RunRequest) -> tuple[str, Path, dict, dict]:
    """Run the request; its run id, directory, gem5.json and results.json."""
    prepared = prepare(request, progress=print)
    run_dir = execute(prepared, progress=print)
    return (prepared.run_id, run_dir, json.loads((run_dir / "gem5.json").read_text()),
            json.loads((run_dir / "results.json").read_text()))


def bench_machine(name: str, cpu: str) -> dict:
    request = RunRequest(machine=name, backend="gem5", cpu=cpu, jobs=(WORKLOAD,),
                         label={"bench": "fixed-cost", "at": time.time()})
    run_id, run_dir, info, results = run_once(request)
    facts = results["facts"]
    up = {k: facts[k] for k in facts if k.startswith("uptime.")}
    return {"machine": name, "cpu": info["cpu"], "commit": COMMIT, "ok": results["ok"],
            "errors": results["errors"], "run_id": run_id,
            "checkpoint_boot_s": info["checkpoint"]["host_seconds"],
            "console_bytes": (run_dir / "console.log").stat().st_size,
            **split(info), "guest_uptime": up}


def campaign_request(spec: str) -> RunRequest:
    """The K-th smoke-scale gem5 request of experiment NAME (``NAME:K``)."""
    name, _, index = spec.partition(":")
    requests = runnable(name, "gem5").requests("smoke", "gem5")
    if not index.isdigit() or int(index) >= len(requests):
        raise UserError(f"--request {spec}: give NAME:K with K from 0 to {len(requests) - 1} "
                        f"({name} has {len(requests)} smoke requests on gem5)")
    return requests[int(index)]


def request_variant(request: RunRequest, warm_caches: float | None,
                    warmup: float | None) -> RunRequest:
    """A campaign's request with the caches bypassed until ``warm_caches`` seconds before
    its region, and its jobs' warm-up replaced by ``warmup`` (None: the experiment's)."""
    request = dataclasses.replace(request, warm_caches=warm_caches)
    if warmup is None:
        return request
    return dataclasses.replace(
        request, jobs=tuple(dataclasses.replace(j, warmup=warmup) for j in request.jobs),
        label={**request.label, "bench_warmup": warmup})


def bench_request(request: RunRequest, warm_caches: float | None,
                  warmup: float | None = None) -> dict:
    """One run of a campaign's request (optionally a variant: request_variant), split as
    the store's runs are."""
    request = request_variant(request, warm_caches, warmup)
    _, run_dir, info, results = run_once(request)
    record = from_run(run_dir)
    if record is None:
        raise SystemExit(f"{run_dir}: the run failed: {results.get('errors')}")
    return {**record, "source": "request", "commit": COMMIT, "warm_caches": warm_caches,
            "label": request.label, "checkpoint_boot_s": info["checkpoint"]["host_seconds"]}


def table(records: list[dict]) -> str:
    cols = ["machine", "cpu", "commit", "restore_s", "restored_to_workbegin_s",
            "restored_to_workbegin_insts", "roi_s", "workend_to_exit_s",
            "workend_to_exit_insts", "console_bytes",
            "gem5_process_s", "fixed_s", "ok"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in records:
        lines.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines)


# The runner's marks (facts uptime.<mark>, guest seconds) in the order it passes them; a
# run of older code lacks `unpacked` and `spec`.
MARKS = ("restored", "unpacked", "begin", "spec", "job", "jobs-done", "end")


def guest_phases(uptime: dict) -> dict[str, float]:
    """Guest seconds between consecutive marks present (``job`` is the first job's)."""
    at = {k.removeprefix("uptime."): float(v) for k, v in uptime.items()}
    at["job"] = min((v for k, v in at.items() if k.startswith("job.")), default=None)
    present = [m for m in MARKS if at.get(m) is not None]
    return {f"{a}->{b}": round(at[b] - at[a], 2) for a, b in zip(present, present[1:])}


def phase_table(records: list[dict]) -> str:
    """Guest seconds per phase of the runner (10 ms steps: the guest's clock)."""
    phases = [guest_phases(r.get("guest_uptime", {})) for r in records]
    cols = sorted({k for p in phases for k in p},
                  key=lambda k: tuple(MARKS.index(m) for m in k.split("->")))
    lines = ["| machine | commit | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for r, p in zip(records, phases):
        lines.append(f"| {r['machine']} | {r['commit']} | "
                     + " | ".join(str(p.get(c, "-")) for c in cols) + " |")
    return "\n".join(lines)


def tables(records: list[dict]) -> str:
    store = [r for r in records if r.get("source") == "store"]
    bench = [r for r in records if r.get("source") not in ("store", "request")]
    requests = [r for r in records if r.get("source") == "request"]
    parts = ([table(bench), "Guest seconds per phase:", phase_table(bench)] if bench else [])
    if store:
        parts += ["Runs of a results directory (medians, host seconds):", store_table(store)]
    if requests:
        parts += ["Campaign requests (host seconds):", request_table(requests)]
    return "\n\n".join(parts)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machines", default="clovertown-e5320",
                   help="comma-separated catalogue names")
    p.add_argument("--cpu", default="o3", choices=("o3", "timing"),
                   help="the region's cores (Hector's are in-order: timing)")
    p.add_argument("--request", metavar="EXPERIMENT:K",
                   help="run the K-th smoke gem5 request of a campaign experiment instead")
    p.add_argument("--warm-caches", type=float, default=None, metavar="S",
                   help="with --request: bypass the caches until S guest seconds before the "
                        "region")
    p.add_argument("--warmup", type=float, default=None, metavar="S",
                   help="with --request: the jobs' warm-up in guest seconds instead of the "
                        "experiment's (0: measure the set-up alone)")
    p.add_argument("--from-store", type=Path, metavar="DIR",
                   help="split the finished gem5 runs of this results directory instead")
    add_record_options(p)
    args = p.parse_args()
    if (files := report_files(args)) is not None:
        print_report(files, tables)
        return 0
    if args.from_store:
        records = from_store(args.from_store)
        if args.json:
            append_records(args.json, records)
        print(tables(records))
        return 0
    request = None
    if (args.warmup is not None or args.warm_caches is not None) and not args.request:
        raise SystemExit("bench_fixed_cost: --warmup and --warm-caches change a campaign's "
                         "request; name one with --request EXPERIMENT:K")
    if args.warmup is not None and args.warmup < 0:
        raise SystemExit(f"bench_fixed_cost: --warmup {args.warmup:g}: a warm-up is 0 or more "
                         f"guest seconds")
    if args.request:
        try:
            request = campaign_request(args.request)
        except UserError as e:
            raise SystemExit(f"bench_fixed_cost: {e}") from None
    records = []
    with results_dir("schedlab-bench-fixed-"):
        for name in ([None] if request else args.machines.split(",")):
            records.append(bench_request(request, args.warm_caches, args.warmup) if request
                           else bench_machine(name, args.cpu))
            print(json.dumps(records[-1], indent=1))
    if args.json:
        append_records(args.json, records)
    print(tables(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
