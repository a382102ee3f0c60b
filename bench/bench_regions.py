"""Benchmark what one micro-schedule of region scheduling costs on gem5 (study 3).

Lee and Schwan report the cost of one micro-schedule in cycles and the total overhead at
about 700 micro-schedules per second. Ours is measured with memlat, two regions of 1 MiB
that switch every 2^16 accesses (several hundred visits a second), on a machine with two
L2 caches of 4 MiB each shared by two cores (clovertown-e5320 by default): both regions
fit in one L2, so spreading them over the two caches gains nothing and the difference
between two runs is what micro-scheduling costs:

- ``region-unify``: one region per cache; the thread is micro-scheduled at each switch;
- ``region-confine``: both regions in one cache (partitioning of one process): the same
  regioning phases and access-bit scans, no micro-schedule (or one, into the cache).

Both runs go through the project's runner (the launcher joins memlat to region
scheduling), on Timing cores from the checkpoint on (no fast-forward: every cycle of the
run is timed), with the regioning period at its minimum of 100 ms, so that the first
regions are mapped about 0.2 s after memlat starts, and the run lasts ``--seconds``.

From each run: memlat's accesses per second over its life (its own count and clock, the
same life in both runs), and from the run's trace the micro-schedules of memlat
(``sched_region_micro_schedule`` with its pid) and the span from the first to the last,
for their rate. Then:

- time lost = unify's seconds x (1 - unify's accesses/s / confine's accesses/s);
- cycles per micro-schedule = time lost x the core clock / micro-schedules. This is the
  whole cost a micro-schedule brings: the hinting fault, the migration
  (``migrate_task_to``), the re-protection of the region left, the one hinting fault per
  page of the region arrived at (protected while it was remote), and the L1 refill on the
  new core;
- overhead at R micro-schedules per second = R x cycles per micro-schedule / clock, for
  the paper's 700/s and the rate measured (above 100 %: that rate cannot be sustained);
- instructions per micro-schedule, the work behind those cycles: unify's ROI instructions
  (every core's, from gem5) minus confine's scaled to unify's accesses, per micro-schedule.

Usage (the checkpoint of the machine with the current kernel and image is made first if
missing; ``nice`` it on a shared host):

    GEM5=/path/to/gem5.fast python3 bench/bench_regions.py \\
        --json bench/results/regions-<host>-<date>.json
    python3 bench/bench_regions.py --report bench/results/regions-*.json

bench/gem5.md ("Region scheduling: the cost of a micro-schedule") records the runs made.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_gem5 import measure, record_options, reported_records, save_records  # noqa: E402
from schedlab.backends.gem5.binary import probe  # noqa: E402
from schedlab.machine import load_machine  # noqa: E402
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare  # noqa: E402

POLICIES = ("region-unify", "region-confine")
PAPER_RATE = 700            # micro-schedules per second (Lee and Schwan's overheads)
# Regions form in the first phase, 100 ms after memlat joins, and are mapped 100 ms later
# (the work that ends a phase runs with the access-bit scan, every 100 ms).
SYSCTL = (("kernel.sched_region_period_ms", "100"),)
TRACE_LINE = re.compile(r"\s(\d+\.\d+): sched_region_micro_schedule: pid=(\d+) ")


def request(machine: str, policy: str, seconds: float, access_time: int) -> RunRequest:
    memlat = WorkloadRequest("memlat", size="paper", duration=seconds,
                             args=("--region-size", "1MiB", "--access-time", str(access_time)))
    return RunRequest(machine=machine, backend="gem5", cpu="timing", fast_forward=False,
                      policy=policy, sysctl=SYSCTL, jobs=(memlat,),
                      label={"bench": "regions", "policy": policy})


def record(machine: str, policy: str, seconds: float, access_time: int) -> dict:
    started = time.monotonic()
    run_dir = execute(prepare(request(machine, policy, seconds, access_time), progress=print),
                      progress=print)
    results = json.loads((run_dir / "results.json").read_text())
    info = json.loads((run_dir / "gem5.json").read_text())
    (job,) = results["jobs"]
    trace = run_dir / "artifacts" / "trace.txt"
    stamps = [float(m[1]) for m in TRACE_LINE.finditer(trace.read_text() if trace.is_file()
                                                       else "")
              if int(m[2]) == job["pid"]]
    m = job["metrics"]
    return {"policy": policy, "machine": machine, "run": run_dir.name, "ok": results["ok"],
            "host_s": round(time.monotonic() - started, 1), **measure(info),
            "accesses": m["accesses"], "seconds": m["seconds"],
            "accesses_per_sec": m["accesses_per_sec"], "region_switches": m["region_switches"],
            "micro_schedules": len(stamps),
            "micro_span_s": round(stamps[-1] - stamps[0], 6) if len(stamps) > 1 else 0.0}


def derive(records: list[dict]) -> dict | None:
    """Cycles per micro-schedule and overheads from an unify and a confine record."""
    by = {r["policy"]: r for r in records}
    if not set(POLICIES) <= set(by):
        return None
    unify, confine = by["region-unify"], by["region-confine"]
    extra = unify["micro_schedules"] - confine["micro_schedules"]
    if extra <= 0:
        return None
    clock = load_machine(unify["machine"]).clock_hz
    lost = unify["seconds"] * (1 - unify["accesses_per_sec"] / confine["accesses_per_sec"])
    cycles = lost * clock / extra
    rate = (unify["micro_schedules"] - 1) / unify["micro_span_s"] \
        if unify["micro_span_s"] else 0.0
    insts = unify["roi_insts"] - confine["roi_insts"] * unify["accesses"] / confine["accesses"]
    return {"clock_hz": clock, "lost_s": lost, "extra_micro_schedules": extra,
            "cycles_per_micro_schedule": cycles, "insts_per_micro_schedule": insts / extra,
            "measured_rate": rate,
            "overhead_at_paper_rate": PAPER_RATE * cycles / clock,
            "overhead_at_measured_rate": rate * cycles / clock}


def table(records: list[dict]) -> str:
    lines = ["| policy | run ok | host s | ROI insts | simulated s (memlat) | accesses/s "
             "| region switches | micro-schedules | their span s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['policy']} | {r['ok']} | {r['host_s']:.0f} | {r['roi_insts']:,} "
                     f"| {r['seconds']:.3f} "
                     f"| {r['accesses_per_sec']:.4e} | {r['region_switches']} "
                     f"| {r['micro_schedules']} | {r['micro_span_s']:.3f} |")
    d = derive(records)
    if d:
        lines += ["", f"Time lost with micro-scheduling: {1e3 * d['lost_s']:.2f} ms for "
                  f"{d['extra_micro_schedules']} micro-schedules, "
                  f"**{d['cycles_per_micro_schedule']:,.0f} cycles per micro-schedule** at "
                  f"{d['clock_hz'] / 1e9:.2f} GHz "
                  f"({d['insts_per_micro_schedule']:,.0f} instructions); overhead "
                  f"{100 * d['overhead_at_paper_rate']:.1f} % at {PAPER_RATE}/s, "
                  f"{100 * d['overhead_at_measured_rate']:.1f} % at the measured "
                  f"{d['measured_rate']:.0f}/s."]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--machine", default="clovertown-e5320",
                   help="a machine with two last-level caches (default: %(default)s)")
    p.add_argument("--seconds", type=float, default=0.35,
                   help="memlat's simulated run time (default: %(default)s)")
    p.add_argument("--access-time", type=int, default=2**16,
                   help="memlat's accesses per region visit (default: %(default)s)")
    record_options(p)
    args = p.parse_args()
    if args.report:
        records = reported_records(args.report)
    else:
        binary = probe()
        records = [record(args.machine, pol, args.seconds, args.access_time)
                   for pol in POLICIES]
        save_records(args.json, binary, records, derived=derive(records))
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
