"""Benchmark the Hector model's memory latencies against the machine's table (issue 18).

One gem5 run per ring delay (0, 16 and 64 by default) of ``programs/numa_linechase.c`` on
Hector's Timing cores: it finds a bank holding its pages and measures the cycles one
cache-line load takes from that bank, seen from the bank's own processor module (local),
from another module of its station (on-station) and from another station over the ring
(off-station). Each is the extra cycles a chase that always misses the L1 takes per load
over the same chase hitting it. The reference is the machine's table of cache-line load
times (Brecht's paper, as configs/machines.toml's notes for Hector give it): 19, 29 and
37 + 3 x delay cycles. The check passes when every class is within 15 %.

    GEM5=/path/to/gem5.fast python3 bench/bench_hector_latency.py \\
        --json bench/results/hector-latency-<host>-<date>.json

Records go to the JSON file (one per delay) and a markdown table to stdout; ``gem5.md``
("Hector's memory latencies") keeps the runs made on the project's hosts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schedlab.backends.gem5.plan import plan_from_dict  # noqa: E402
from schedlab.machine import load_machine  # noqa: E402
from records import (add_record_options, append_records, print_report,  # noqa: E402
                     report_files, results_dir)
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "programs" / "numa_linechase.c"
MACHINE = "hector"
ALLOC_CPU = 4            # station 1: the probe's memory is first touched there
TOLERANCE = 0.15
# Simulated seconds of warm-up: the probe's set-up (faulting in memory, pagemap) runs on
# the Atomic cores before the region; at 16.67 MHz a few MiB take a few hundred ms.
WARMUP_S = 1.0
# Milliseconds the probe waits past the region's nominal start before it measures: the
# launcher's m5 ops follow that start by the time its wake-up takes (results.json's
# roi_late_ns; 54 ms on Hector's 16.67 MHz cores when its warm-up still began after
# forking and placing the probe), and a record whose launcher was later than this is
# refused (its first chases would have run on Atomic cores, where a miss costs what a hit
# does).
SETTLE_MS = 250
CLASSES = ("local", "station", "remote")


def reference_cycles(delay: int) -> dict[str, float]:
    """Hector's cache-line load times (papers.md, section 4) for a ring delay."""
    return {"local": 19.0, "station": 29.0, "remote": 37.0 + 3.0 * delay}


def bank_args(delay: int) -> tuple[str, ...]:
    """The --bank options: each modelled bank's physical range, node and module's CPU."""
    machine = load_machine(MACHINE, [f"memory.delay.cycles={delay}"])
    plan = plan_from_dict(machine.to_dict())
    out: list[str] = []
    for b in plan.memory.banks:
        cpu = machine.packages[b.packages[0]][0]
        out += ["--bank", f"{b.start:#x},{b.size:#x},{b.node},{cpu}"]
    return tuple(out)


def request(delay: int, label: dict | None = None) -> RunRequest:
    job = WorkloadRequest(str(PROGRAM), size="smoke", warmup=WARMUP_S,
                          args=("--alloc-cpu", str(ALLOC_CPU), "--settle-ms", str(SETTLE_MS),
                                *bank_args(delay)))
    return RunRequest(machine=MACHINE, backend="gem5", cpu="timing", jobs=(job,),
                      overrides=(f"memory.delay.cycles={delay}",),
                      label={"bench": "hector-latency", "delay": delay, **(label or {})})


def measured(results: dict) -> dict[str, float]:
    """The probe's load cycles per class from a run's results.json."""
    job = results["jobs"][0]
    late_ms = job["roi_late_ns"] / 1e6
    if late_ms >= SETTLE_MS:
        raise RuntimeError(f"the region began {late_ms:.1f} ms late, after the probe's "
                           f"{SETTLE_MS} ms settle; raise SETTLE_MS in {Path(__file__).name}")
    metrics = job["metrics"]
    return {c: float(metrics[f"{c}_load_cycles"]) for c in CLASSES
            if f"{c}_load_cycles" in metrics}


def compare(delay: int, cycles: dict[str, float]) -> list[dict]:
    ref = reference_cycles(delay)
    return [{"delay": delay, "class": c, "measured_cycles": cycles.get(c),
             "reference_cycles": ref[c],
             "error": None if c not in cycles else round(cycles[c] / ref[c] - 1, 4),
             "within": c in cycles and abs(cycles[c] / ref[c] - 1) <= TOLERANCE}
            for c in CLASSES]


def bench_delay(delay: int) -> dict:
    prepared = prepare(request(delay), progress=print)
    run_dir = execute(prepared, progress=print)
    results = json.loads((run_dir / "results.json").read_text())
    info = json.loads((run_dir / "gem5.json").read_text())
    job = results["jobs"][0]
    return {"delay": delay, "run_id": prepared.run_id, "ok": results["ok"],
            "errors": results["errors"], "gem5_process_s": round(info["host_seconds"], 1),
            "roi_late_ms": round(job["roi_late_ns"] / 1e6, 3),
            "probe": {k: v for k, v in job["metrics"].items()},
            "kernel": prepared.spec["kernel"], "image": prepared.spec["image"],
            "hashes": results["hashes"],
            "rows": compare(delay, measured(results))}


def table(records: list[dict]) -> str:
    lines = ["| delay | class | measured cycles | table cycles | error | within 15 % |",
             "|---|---|---|---|---|---|"]
    for r in records:
        for row in r["rows"]:
            err = "" if row["error"] is None else f"{row['error']:+.1%}"
            got = "" if row["measured_cycles"] is None else f"{row['measured_cycles']:.1f}"
            lines.append(f"| {row['delay']} | {row['class']} | {got} | "
                         f"{row['reference_cycles']:.0f} | {err} | "
                         f"{'yes' if row['within'] else 'no'} |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--delays", default="0,16,64", help="comma-separated ring delays (cycles)")
    add_record_options(p)
    args = p.parse_args()
    if (files := report_files(args)) is not None:
        print_report(files, table)
        return 0
    records = []
    with results_dir("schedlab-bench-latency-"):
        for delay in (int(d) for d in args.delays.split(",")):
            records.append(bench_delay(delay))
            print(json.dumps(records[-1], indent=1))
    if args.json:
        append_records(args.json, records)
    print(table(records))
    return 0 if all(row["within"] for r in records for row in r["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
