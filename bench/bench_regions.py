"""Benchmark what one micro-schedule of region scheduling costs on gem5 (study 3).

Lee and Schwan report the cost of one micro-schedule in cycles and the total overhead at
about 700 micro-schedules per second. Ours is measured with lee-fig9's own runs at the
point where micro-scheduling is all that differs: memlat, two regions of 1 MiB that switch
every 2^16 accesses (one visit every few hundred microseconds), on a machine whose
last-level caches each hold both regions (Clovertown X5365: two 4 MiB L2s; Westmere X5660:
two 12 MiB L3s), so spreading them over two caches gains no capacity:

- ``region-unify``: one region per cache; the thread is micro-scheduled at each switch;
- ``region-confine``: both regions in one cache: the same regioning phases and scans, no
  micro-schedule in the ROI.

The runs are the requests of ``run.py reproduce lee-fig9`` at smoke scale on gem5 (same
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

Usage (one machine per file; ``nice`` it on a shared host):

    GEM5=/path/to/gem5.fast python3 bench/bench_regions.py --machine clovertown-x5365 \\
        --json bench/results/regions-<host>-<date>-x5365.json
    python3 bench/bench_regions.py --report bench/results/regions-*.json

bench/gem5.md ("Region scheduling: the cost of a micro-schedule") records the runs made;
files from before 2026-11-26 hold the earlier method's records (Timing cores from the
restore, 0.35 s runs, the regions' whole life; their derived numbers are printed as saved).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_gem5 import measure, record_options, save_records  # noqa: E402
from schedlab.analysis import lee  # noqa: E402
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


def requests(machine: str) -> list[RunRequest]:
    """lee-fig9's smoke gem5 runs of the point on ``machine``, both policies and reps."""
    out = [r for r in get("lee-fig9").requests("smoke", "gem5")
           if r.label["machine"] == machine
           and all(r.label[k] == v for k, v in POINT.items())]
    if not out:
        raise SystemExit(f"bench_regions: lee-fig9 has no runs on {machine}; use one of "
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machine", default="clovertown-x5365", choices=MACHINES,
                   help="one of lee-fig9's machines (default: %(default)s)")
    record_options(p)
    args = p.parse_args()
    if args.report:
        for path in args.report:
            data = json.loads(path.read_text())
            print(f"{path.name}:\n{table(data['records'], data.get('derived'))}\n")
        return 0
    binary = probe()
    records = [record(r) for r in requests(args.machine)]
    derived = derive(records)
    save_records(args.json, binary, records, derived=derived)
    print(table(records, derived))
    return 0


if __name__ == "__main__":
    sys.exit(main())
