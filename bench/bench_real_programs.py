"""Real programs on gem5 (issue 51): what one run of each costs and measures, beside the
stand-in it replaces.

The runs are ordinary ``run.py run`` or campaign runs (the studies' own requests: see
bench/real-programs.md for the commands); this collects them into records:

    python3 bench/bench_real_programs.py --collect RUN-DIR... --json RECORDS
    GEM5=... python3 bench/bench_real_programs.py --study-runs --json RECORDS
    python3 bench/bench_real_programs.py --report RECORDS

(RECORDS: bench/results/real-programs.json)

A record: the run id and its provenance hashes, the machine, the workload and its label,
the warm-up and region asked for, the region's counters (IPC, L1 I/D and L2 misses per 1000
instructions), the host seconds of the whole run, and the payload: the bytes the guest
unpacked (the real program's files and inputs; the workloads' multicall binary comes with
every run) and the simulated time between the restore and the end of the unpacking (the
guest's uptime, 10 ms resolution).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from records import (add_record_options, append_records, print_report,  # noqa: E402
                     report_files)

from schedlab.guest import packages, workloads  # noqa: E402
from schedlab.paths import cache_dir  # noqa: E402


def _payload_bytes(spec: dict) -> int | None:
    """The real programs' files and inputs the run carried (0 for the stand-ins), from what
    its spec names: its inputs by their identity in the cache, its packages if they are
    today's lock (None where either is not known any more)."""
    total = 0
    for name, identity in spec.get("real_programs", {}).items():
        w = workloads.get(name)
        if identity["packages"] != packages.lock_identity(packages.read_lock(w.dir)):
            return None
        files = packages.program_files(name, w.dir, w.program, progress=lambda s: None)
        total += packages.unpacked_bytes(files)
        for made in identity["inputs"].values():
            path = cache_dir() / "inputs" / made
            if not path.is_file():
                return None
            total += path.stat().st_size
    return total


def record(run_dir: Path) -> dict:
    results = json.loads((run_dir / "results.json").read_text())
    spec = json.loads((run_dir / "spec.json").read_text())
    gem5 = json.loads((run_dir / "gem5.json").read_text())
    job = results["jobs"][0]
    # The program's own counters where the run attributed them per task (the studies'
    # runs share its CPU with other tasks), else its CPUs' in the region.
    counters = job.get("gem5_task") or job.get("gem5", {})
    facts = results.get("facts", {})
    guest_job = spec["jobs"][0]
    return {
        "run_id": results["run_id"], "ok": results["ok"], "hashes": results.get("hashes"),
        "gem5_hash": gem5.get("gem5_hash"), "machine": results["machine"],
        "workload": job["job"], "label": results.get("label"), "cpu": gem5.get("cpu"),
        "counters": "task" if job.get("gem5_task") else "cpus",
        "warmup_s": guest_job.get("warmup_us", 0) / 1e6,
        "region_s": guest_job.get("duration_us", 0) / 1e6,
        "ipc": counters.get("ipc"), "l1i_mpki": counters.get("l1i_mpki"),
        "l1d_mpki": counters.get("l1d_mpki"),
        "l2_mpki": counters.get("l2_mpki", counters.get("llc_mpki")),
        "host_s": round(gem5.get("host_seconds", 0)),
        "payload_real_bytes": _payload_bytes(spec),
        "unpack_sim_s": round(float(facts.get("uptime.unpacked", 0))
                              - float(facts.get("uptime.restored", 0)), 2),
    }


def _mb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:.1f}MB"


def table(records: list[dict]) -> str:
    head = (f"{'workload':<20} {'machine':<22} {'warm-up':>7} {'region':>7} {'IPC':>5} "
            f"{'L1I':>6} {'L1D':>6} {'L2':>5} {'payload':>8} {'unpack':>6} {'host':>6}")
    lines = [head, "-" * len(head)]
    for r in records:
        lines.append(
            f"{r['workload']:<20} {r['machine']:<22} {r['warmup_s']:>6.3f}s "
            f"{r['region_s']:>6.3f}s {r['ipc'] or 0:>5.2f} {r['l1i_mpki'] or 0:>6.2f} "
            f"{r['l1d_mpki'] or 0:>6.2f} {r['l2_mpki'] or 0:>5.2f} "
            f"{_mb(r['payload_real_bytes']):>8} {r['unpack_sim_s']:>5.2f}s "
            f"{r['host_s']:>5}s")
    return "\n".join(lines) + "\n(L1I, L1D, L2: misses per 1000 instructions of the region, " \
        "the program's own where the run attributed them per task, else its CPUs'; payload: " \
        "the real program's files and inputs; unpack: simulated s, restore to unpacked)"


# The studies' own requests that check each real program of a study (issue 51, item 4):
# experiment, benchmark, and what else picks the request (its first repetition).
STUDY_RUNS = (("kazempour-fig2", "parser", {}), ("kazempour-fig2", "gap", {}),
              *(("lee-fig18-23", b, {"policy": "vanilla", "machine": "clovertown-x5365"})
                for b in ("sphinx", "h264ref")))


def study_runs() -> list[Path]:
    """Make each study's run of each real program (gem5; GEM5 must be set)."""
    from schedlab.campaigns.experiment import registry
    from schedlab.runs import execute, prepare

    made = []
    for name, benchmark, where in STUDY_RUNS:
        request = next(r for r in registry()[name].requests("smoke", "gem5")
                       if r.label["benchmark"] == benchmark and r.label["rep"] == 0
                       and all(getattr(r, k) == v for k, v in where.items()))
        print(f"{name}: {benchmark} as {request.jobs[0].workload}, warm-up "
              f"{request.jobs[0].warmup} s", flush=True)
        made.append(execute(prepare(request, progress=print), progress=print))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collect", type=Path, nargs="+", metavar="RUN_DIR")
    parser.add_argument("--study-runs", action="store_true",
                        help="make the studies' run of each real program (GEM5 set), "
                             "then collect them")
    add_record_options(parser)
    args = parser.parse_args()
    if args.study_runs:
        args.collect = study_runs()
    if args.report is None and not args.collect:
        args.report = []              # nothing to measure: the kept records' table
    if (files := report_files(args)) is not None:
        print_report(files, table)
        return
    records = [record(d) for d in args.collect]
    if args.json:
        append_records(args.json, records)
    print(table(records))


if __name__ == "__main__":
    main()
