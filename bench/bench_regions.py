"""Benchmark what one micro-schedule of region scheduling costs on gem5 (study 3).

Lee and Schwan report the cost of one micro-schedule in cycles and the total overhead at
about 700 micro-schedules per second. Ours is measured with lee-overheads' own runs at the
point where micro-scheduling is all that differs: memlat, two regions of 1 MiB that switch
every 2^16 accesses (one visit every few hundred microseconds), on a machine whose
last-level caches each hold both regions (Clovertown X5365: two 4 MiB L2s; Westmere X5660:
two 12 MiB L3s), so spreading them over two caches gains no capacity:

- ``region-unify``: one region per cache; the thread is micro-scheduled at each switch (the
  rate rule of kernel-patches 0031 off, as lee-overheads runs it);
- ``region-confine``: both regions in one cache: the same regioning phases and scans, no
  micro-schedule in the ROI.

The runs are the requests of ``run.py reproduce lee-overheads`` at smoke scale on gem5 (same
run ids: with ``SCHEDLAB_RESULTS`` at a store where that campaign ran, they are reused,
not run again): O3 cores in a 20 ms ROI after an Atomic warm-up, the regions mapped before
it, both repetitions (memlat's seeds). From each, through ``schedlab.analysis.lee``:
memlat's accesses per second over the ROI (its own count and clock) and the micro-schedules
inside the ROI (the trace, between the launcher's marks). Then
(``lee.micro_schedule_cost``, the figure lee-overheads draws):

- time lost = the unify run's ROI x (1 - its accesses/s / confinement's mean);
- cycles per micro-schedule = time lost x the core clock / micro-schedules in the ROI:
  the whole cost a micro-schedule brings (the hinting fault, ``migrate_task_to``, the
  protection changes of the region left and arrived at, the L1 refill on the new core);
- instructions per micro-schedule: the unify run's ROI instructions (every core, gem5)
  minus confinement's scaled to its accesses, per micro-schedule;
- overhead at R micro-schedules per second = R x cycles per micro-schedule / clock, for
  the paper's 700/s and the rate measured.

The micro-schedule by its parts (``--breakdown``): the unify runs again with the kernel
functions of ``lee.MICRO_SCHEDULE_FUNCTIONS`` timed by ftrace's function graph tracer
(``RunRequest.trace_functions``): per micro-schedule in the ROI, the fault handler, region
scheduling's own work, ``migrate_task_to``, ``change_protection``, the TLB flushes and their
IPIs (``lee.micro_schedule_parts``); what the whole cost above leaves outside the fault
handler is the exception's entry and return and the thread's restart on the new core (its
L1 refilled). The tracer's own work is in the traced durations, and shows as the traced
unify run's accesses/s against the untraced one's.

Linux's own path over the same pages (``--yardstick``): memlat at the same point (with a
sleeping second thread: NUMA balancing protects every page of a multi-threaded process, of a
single-threaded one only those off its node) without region scheduling under the
``numa-balancing`` policy (Linux's NUMA balancing scanning every
10 ms), the scans (``task_numa_work``, ``change_prot_numa``), the hinting faults
(``handle_mm_fault`` calls with ``task_numa_fault`` inside) and any ``migrate_task_to``
timed the same way.

With the rate rule (``--rate-rule``): the same point's unify runs as lee-fig9 makes them,
the rate rule of kernel-patches 0031 on, beside the runs above. Per run: memlat's
accesses/s and its micro-schedules in the ROI, and what the kernel itself measured of its
moves (``sched_region_move_cost``: each move's cost t from the hinting fault to the
thread's return on the new CPU, the hold it got) and declined (``held``, ``cold`` in the
launcher's copy of ``/proc/<pid>/sched_regions`` at the ROI's end).

Usage (one machine per file; ``nice`` it on a shared host):

    GEM5=/path/to/gem5.fast python3 bench/bench_regions.py --machine clovertown-x5365 \\
        [--breakdown] [--yardstick] [--rate-rule] \\
        --json bench/results/regions-<host>-<date>-x5365.json
    python3 bench/bench_regions.py --report bench/results/regions-*.json

bench/gem5.md ("Region scheduling: the cost of a micro-schedule") records the runs made;
files from before 2026-11-26 hold the earlier method's records (Timing cores from the
restore, 0.35 s runs, the regions' whole life; their derived numbers are printed as saved).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import add_record_options, report_files, save_gem5_records  # noqa: E402
from bench_gem5 import measure  # noqa: E402
from schedlab.analysis import function_graph, lee  # noqa: E402
from schedlab.backends.gem5.binary import probe  # noqa: E402
from schedlab.campaigns.experiment import get  # noqa: E402
from schedlab.campaigns.lee import MACHINES  # noqa: E402
from schedlab.machine import load_machine  # noqa: E402
from schedlab.runs import RunRequest, execute, prepare  # noqa: E402

PAPER_RATE = lee.PAPER_MICRO_RATE
POINT = {"region_size": "1MiB", "access_time": 2**16}
# What lee.micro_schedule_cost reads of each run, kept in the record.
COST_FIELDS = ("machine", "region_size", "access_time", "policy", "rep", "micro_in_roi",
               "micro_per_s", "roi_seconds", "roi_accesses", "roi_accesses_per_sec",
               "gem5_insts")


def requests(machine: str, reps: int | None = None) -> list[RunRequest]:
    """lee-overheads' smoke gem5 runs of the point on ``machine`` (unification with the
    rate rule off, so that every switch is a move), both policies, its repetitions (the
    first ``reps`` of them)."""
    out = [r for r in get("lee-overheads").requests("smoke", "gem5")
           if r.label["machine"] == machine
           and all(r.label[k] == v for k, v in POINT.items())
           and (reps is None or r.label["rep"] < reps)]
    if not out:
        raise SystemExit(f"bench_regions: lee-overheads has no runs on {machine}; use one of "
                         f"{', '.join(MACHINES)}")
    return out


def record(request: RunRequest) -> dict:
    """One run's record (its gem5 host seconds are the run's own, reused or not)."""
    run_dir = execute(prepare(request, progress=print), progress=print)
    (row,) = lee.collect([run_dir])[""].to_dict("records")
    info = json.loads((run_dir / "gem5.json").read_text())
    hashes = json.loads((run_dir / "results.json").read_text())["hashes"]
    return {"run": run_dir.name, "ok": bool(row["ok"]), "kernel": hashes["kernel"],
            "image": hashes["image"], **measure(info),
            **{k: row[k] for k in COST_FIELDS}}


def trace_of(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return function_graph.parse((run_dir / "artifacts" / "trace.txt").read_text())


def breakdown_record(request: RunRequest) -> dict:
    """A unify run with the micro-schedule's functions timed: its parts, one row each."""
    traced = dataclasses.replace(request, trace_functions=lee.MICRO_SCHEDULE_FUNCTIONS)
    run_dir = execute(prepare(traced, progress=print), progress=print)
    (row,) = lee.collect([run_dir])[""].to_dict("records")
    parts = lee.micro_schedule_parts(*trace_of(run_dir))
    info = json.loads((run_dir / "gem5.json").read_text())
    return {"run": run_dir.name, "ok": bool(row["ok"]), "kind": "breakdown", **measure(info),
            "machine": row["machine"], "policy": row["policy"], "rep": row["rep"],
            "roi_accesses_per_sec": row["roi_accesses_per_sec"],
            "micro_schedules": parts.to_dict("records")}


def yardstick_record(request: RunRequest) -> dict:
    """The confine request's memlat, with a second thread that sleeps, under Linux's NUMA
    balancing instead of region scheduling, its scans and hinting faults timed."""
    (memlat,) = request.jobs
    # A second (sleeping) thread: NUMA balancing leaves the pages of a single-threaded
    # process on its own node unprotected, and one node holds all of memlat's.
    memlat = dataclasses.replace(memlat, args=(*memlat.args, "--threads", "2"))
    linux = dataclasses.replace(request, policy="numa-balancing", jobs=(memlat,),
                                trace_functions=lee.NUMA_BALANCING_FUNCTIONS,
                                label={**request.label, "policy": "numa-balancing"})
    run_dir = execute(prepare(linux, progress=print), progress=print)
    calls, comments = trace_of(run_dir)
    info = json.loads((run_dir / "gem5.json").read_text())
    return {"run": run_dir.name, "kind": "yardstick", **measure(info),
            "machine": request.label["machine"], "policy": "numa-balancing",
            "rep": request.label["rep"], **lee.numa_balancing_costs(calls, comments)}


_MOVE_COST = re.compile(r"\s(\d+\.\d+): sched_region_move_cost: pid=\d+ tgid=(\d+) "
                        r"cost_ns=(\d+) avg_ns=(\d+) hold_ns=(\d+)")


def rate_rule_record(request: RunRequest) -> dict:
    """lee-fig9's unify run of the same point (the rate rule on): the plain record, the
    kernel's timings of its moves in the ROI and the touches it declined."""
    (ours,) = [r for r in get("lee-fig9").requests("smoke", "gem5")
               if r.label == request.label]
    run_dir = execute(prepare(ours, progress=print), progress=print)
    (row,) = lee.collect([run_dir])[""].to_dict("records")
    info = json.loads((run_dir / "gem5.json").read_text())
    (job,) = json.loads((run_dir / "results.json").read_text())["jobs"]
    start, end = (row["roi_start_s"], row["roi_end_s"])
    trace = (run_dir / "artifacts" / "trace.txt").read_text()
    execs = lee.parse_region_trace(trace)
    t0 = float(execs[(execs["event"] == "exec") & (execs["tgid"] == job["pid"])]["ts"].min())
    moves = pd.DataFrame([(float(m[1]) - t0, int(m[3]), int(m[4]), int(m[5]))
                          for m in _MOVE_COST.finditer(trace) if int(m[2]) == job["pid"]],
                         columns=["t_s", "cost_ns", "avg_ns", "hold_ns"])
    moves = moves[(moves["t_s"] >= start) & (moves["t_s"] <= end)]
    copy = run_dir / "artifacts" / job["job"] / str(job["rep"]) / "sched_regions.end"
    counters = dict(re.findall(r"^(move_ns|held|cold): (\d+)$", copy.read_text(), re.M))
    return {"run": run_dir.name, "ok": bool(row["ok"]), "kind": "rate-rule", **measure(info),
            **{k: row[k] for k in COST_FIELDS},
            "local_at_roi": row["local_at_roi"], "largest_local_pages": row["largest_local_pages"],
            "moves_timed_in_roi": len(moves),
            "move_cost_median_us": moves["cost_ns"].median() / 1e3,
            "hold_median_ms": moves["hold_ns"].median() / 1e6,
            **{k: int(v) for k, v in counters.items()}}


def markdown(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of already formatted cells."""
    return "\n".join(["| " + " | ".join(header) + " |", "|---" * len(header) + "|",
                      *("| " + " | ".join(r) + " |" for r in rows)])


def rate_rule_table(records: list[dict]) -> str:
    rows = [r for r in records if r.get("kind") == "rate-rule"]
    if not rows:
        return ""
    return "With the rate rule (lee-fig9's unify runs):\n\n" + markdown(
        ["machine", "regions", "rep", "regions at the ROI (largest, pages)",
         "memlat ROI accesses/s", "micro-schedules in the ROI", "per s",
         "kernel's move cost, median us", "hold, median ms", "held", "cold"],
        [[r["machine"], f"2 x {r['region_size']}", str(r["rep"]),
          f"{r.get('local_at_roi', '-')} ({r.get('largest_local_pages', '-')})",
          f"{r['roi_accesses_per_sec']:.4e}",
          str(r["micro_in_roi"]), f"{r['micro_per_s']:.0f}", f"{r['move_cost_median_us']:.1f}",
          f"{r['hold_median_ms']:.2f}", str(r.get("held", "-")), str(r.get("cold", "-"))]
         for r in rows])


def derive(records: list[dict]) -> dict | None:
    """Cycles per micro-schedule and the overheads, the mean over the unify runs."""
    cost = lee.summary(get("lee-overheads"), {"": pd.DataFrame(records)})
    if "cycles_per_micro" not in cost:     # no unify run micro-scheduled in its ROI
        return None
    (c,) = cost.to_dict("records")
    return {"clock_hz": load_machine(records[0]["machine"]).clock_hz,
            "runs": int(c["runs"]), "lost_s": c["lost_ms"] / 1e3,
            "micro_schedules": float(c["micro_in_roi"]),
            "cycles_per_micro_schedule": c["cycles_per_micro"],
            "insts_per_micro_schedule": c["insts_per_micro"],
            "measured_rate": c["micro_per_s"],
            "overhead_at_paper_rate": c["overhead_at_700"],
            "overhead_at_measured_rate": c["overhead_measured"]}


def table(records: list[dict], derived: dict | None) -> str:
    lines = ["| machine | policy | rep | run ok | gem5 host s | ROI insts | memlat ROI accesses/s "
             "| micro-schedules in the ROI |", "|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['machine']} | {r['policy']} | {r.get('rep', '-')} | {r['ok']} "
                     f"| {r.get('total_host_s', r.get('host_s')):.0f} | {r['roi_insts']:,} "
                     f"| {r.get('roi_accesses_per_sec', r.get('accesses_per_sec')):.4e} "
                     f"| {r.get('micro_in_roi', r.get('micro_schedules'))} |")
    d = derived
    if d:
        lines += ["", f"**{d['cycles_per_micro_schedule']:,.0f} cycles per micro-schedule** "
                  f"at {d['clock_hz'] / 1e9:.2f} GHz "
                  f"({d['insts_per_micro_schedule']:,.0f} instructions); overhead "
                  f"{100 * d['overhead_at_paper_rate']:.1f} % at {PAPER_RATE}/s, "
                  f"{100 * d['overhead_at_measured_rate']:.1f} % at the measured "
                  f"{d['measured_rate']:.0f}/s."]
    return "\n".join(lines)


def parts(records: list[dict], derived: dict | None) -> dict | None:
    """The breakdown runs' micro-schedules: each part's mean (us and cycles) over all of
    them, their number, and what the whole cost leaves outside the fault handler."""
    rows = pd.DataFrame([m for r in records if r.get("kind") == "breakdown"
                         for m in r["micro_schedules"]])
    if rows.empty:
        return None
    clock = load_machine(records[0]["machine"]).clock_hz
    cols = ["fault_us", *lee.MICRO_SCHEDULE_PARTS]
    out = {"micro_schedules": len(rows), "clock_hz": clock,
           "mean_us": {c: rows[c].mean() for c in cols},
           "sd_us": {c: rows[c].std() for c in cols},
           "median_us": {c: rows[c].median() for c in cols},
           "mean_cycles": {c: rows[c].mean() * clock / 1e6 for c in cols},
           "median_cycles": {c: rows[c].median() * clock / 1e6 for c in cols},
           "protect_calls": rows["protect_calls"].mean(),
           "flush_calls": rows["flush_calls"].mean(),
           "remote_flushes": rows["remote_flushes"].mean()}
    if derived:
        # The median handler: a micro-schedule's first move in a ROI can wait hundreds of
        # microseconds for its CPU (an outlier the mean would carry).
        out["outside_fault_cycles"] = (derived["cycles_per_micro_schedule"]
                                       - out["median_cycles"]["fault_us"])
    # The tracer's own cost: memlat's accesses/s in the traced runs against the plain ones
    traced = [r["roi_accesses_per_sec"] for r in records if r.get("kind") == "breakdown"]
    plain = [r["roi_accesses_per_sec"] for r in records
             if r.get("kind", "plain") == "plain" and r["policy"] == "region-unify"]
    if traced and plain:
        out["traced_over_plain"] = (sum(traced) / len(traced)) / (sum(plain) / len(plain))
    return out


PART_NAMES = {"fault_us": "the fault handler (handle_mm_fault), of which:",
              "linux_fault_us": "  Linux's hinting fault (do_numa_page, the walk, locks)",
              "migrate_us": "  migrate_task_to (until it runs on the new CPU)",
              "protect_us": "  change_protection of the regions closed and opened",
              "flush_us": "  TLB flushes (flush_tlb_mm_range), of which:",
              "ipi_us": "    on_each_cpu_cond_mask (here, and by IPI elsewhere)",
              "regions_us": "  region scheduling's own work (page index walk, VMAs, pick)"}


def parts_table(p: dict, derived: dict | None) -> str:
    lines = [f"Micro-schedules in the traced ROIs: {p['micro_schedules']} "
             f"({p['protect_calls']:.1f} change_protection and {p['flush_calls']:.1f} "
             f"flush calls each, {p['remote_flushes']:.1f} flushes on other CPUs)", "",
             "| part | median us | mean us | sd us | median cycles |", "|---|---|---|---|---|"]
    if "traced_over_plain" in p:
        lines[0] += (f"; memlat's accesses/s traced over untraced: "
                     f"{p['traced_over_plain']:.4f}")
    for c, name in PART_NAMES.items():
        median = p.get("median_us", p["mean_us"])[c]
        lines.append(f"| {name} | {median:.2f} | {p['mean_us'][c]:.2f} | {p['sd_us'][c]:.2f} "
                     f"| {median * p['clock_hz'] / 1e6:,.0f} |")
    if derived and "outside_fault_cycles" in p:
        lines.append(f"| outside the handler (exception entry/return, restart on the new "
                     f"core): whole cost {derived['cycles_per_micro_schedule']:,.0f} minus the "
                     f"traced handler's median | | | | {p['outside_fault_cycles']:,.0f} |")
    return "\n".join(lines)


def yardstick_table(records: list[dict]) -> str:
    rows = [r for r in records if r.get("kind") == "yardstick"]
    if not rows:
        return ""
    return markdown(
        ["machine", "rep", "scans", "scan us", "change_prot_numa us", "hinting faults",
         "fault us", "faults per scan", "migrations", "migrate us"],
        [[r["machine"], str(r["rep"]), str(r["scans"]), f"{r['scan_us']:.1f}",
          f"{r['change_prot_numa_us']:.1f}", str(r["hinting_faults"]),
          f"{r['hinting_fault_us']:.2f}", f"{r['faults_per_scan']:.0f}", str(r["migrations"]),
          f"{r['migrate_us']:.1f}"] for r in rows])


def report(records: list[dict], derived: dict | None) -> str:
    plain = [r for r in records if r.get("kind", "plain") == "plain"]
    out = [table(plain, derived)]
    if p := parts(records, derived):
        out += ["", parts_table(p, derived)]
    if y := yardstick_table(records):
        out += ["", y]
    if r := rate_rule_table(records):
        out += ["", r]
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machine", default="clovertown-x5365", choices=MACHINES,
                   help="one of lee-overheads' machines (default: %(default)s)")
    p.add_argument("--breakdown", action="store_true",
                   help="also run the unify runs with the micro-schedule's functions timed")
    p.add_argument("--yardstick", action="store_true",
                   help="also run memlat under Linux's NUMA balancing, its costs timed")
    p.add_argument("--rate-rule", action="store_true",
                   help="also run lee-fig9's unify runs of the point (the rate rule on)")
    p.add_argument("--reps", type=int, default=None, metavar="N",
                   help="only the first N repetitions (default: all of lee-overheads')")
    add_record_options(p)
    args = p.parse_args()
    if (files := report_files(args)) is not None:
        for path in files:
            data = json.loads(path.read_text())
            print(f"{path.name}:\n{report(data['records'], data.get('derived'))}\n")
        return 0
    binary = probe()
    plain = requests(args.machine, args.reps)
    records = [{"kind": "plain", **record(r)} for r in plain]
    derived = derive(records)
    unify = [r for r in plain if r.policy == "region-unify"]
    if args.breakdown:
        records += [breakdown_record(r) for r in unify]
    if args.yardstick:
        records += [yardstick_record(r) for r in plain if r.policy == "region-confine"]
    if args.rate_rule:
        records += [rate_rule_record(r) for r in unify]
    save_gem5_records(args.json, binary, records, derived=derived,
                      parts=parts(records, derived))
    print(report(records, derived))
    return 0


if __name__ == "__main__":
    sys.exit(main())
