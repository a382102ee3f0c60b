"""Benchmark sampled simulation against full detailed runs of the same checkpoints (issue 20).

For each case of ``CASES`` (a workload on a machine, alone or beside a base vector on its
CPU) three runs go through the project's runner, restored from the same checkpoint:

- **full**: the region of interest on the detailed cores (O3 or Timing), the reference;
- **sampled**: the same request with ``--sampling`` (configs/README.md, "Sampling"): Atomic
  cores keep the caches warm and periodic windows run on the detailed cores;
- **misses-only**: the same request with ``--cpu atomic`` (Atomic cores throughout, caches
  attached): miss counts without timing.

From each: IPC (the busiest CPU's, as the results table shows it, and with
``--attribute-tasks`` the job's own task's), L1-I, L1-D and last-level cache misses per 1000
instructions (the machine's: every CPU's misses over every CPU's instructions; and the
task's), the region's instructions and simulated seconds, and the host seconds of the region
(``m5 workbegin`` to ``workend``) and of the whole gem5 process. Then the relative error of
the sampled and the misses-only numbers against the full run's, whether the full value lies
inside the sampled 95 % interval, and the speed-ups (full host seconds over sampled).

Runs already in the results store (``SCHEDLAB_RESULTS``) are reused by run id, so a rerun
only adds what is missing; ``--json`` merges the records of the cases run into the file
(other cases' records stay). Usage:

    GEM5=/path/to/gem5.fast SCHEDLAB_RESULTS=... python3 bench/bench_sampling.py \\
        --cases memlat-mup,dijkstra-mup --json bench/results/sampling-<host>-<date>.json
    python3 bench/bench_sampling.py --list
    python3 bench/bench_sampling.py --report bench/results/sampling-*.json

bench/gem5.md ("Sampling validation") records the runs made and reads them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import resource
import sys
import time
import traceback
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import (add_record_options, gem5_records, report_files,  # noqa: E402
                           save_gem5_records)
from bench_gem5 import measure  # noqa: E402
from schedlab.campaigns import kazempour  # noqa: E402
from schedlab.machine import load_machine  # noqa: E402
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare  # noqa: E402

# The two machines of study 1's experiment A: the Clovertown MUP's O3 cores and Niagara's
# in-order cores, which run as Timing cores (MinorCPU panics in X86 full system).
MUP, NIAGARA = "clovertown-e5320-mup", "niagara"


@dataclasses.dataclass(frozen=True)
class Case:
    """One validation case. ``corunner``: a base vector sharing the workload's CPU 0 (both
    SCHED_RR at one priority, so they alternate with the policy's quantum, as study 1's
    experiment A runs them), with the workload's region bounded by study 1's smoke region
    and warm-up, and task attribution on; None: the workload alone, pinned to CPU 0, its
    region the whole program."""

    workload: str
    machine: str
    cpu: str
    corunner: str | None
    policy: str | None
    size: str
    sampling: str


# name:
#            workload        machine  cpu       co-runner policy         size     sampling
CASES = {
    "memlat-mup":
        Case("memlat",       MUP,     "o3",     None,     None,          "smoke", "smarts-dense"),
    "dijkstra-mup":
        Case("dijkstra",     MUP,     "o3",     None,     None,          "smoke", "smarts-dense"),
    "parser-bv0-mup":
        Case("parser",       MUP,     "o3",     "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "memlat-niagara":
        Case("memlat",       NIAGARA, "timing", None,     None,          "smoke", "smarts-dense"),
    "dijkstra-niagara":
        Case("dijkstra",     NIAGARA, "timing", None,     None,          "smoke", "smarts-dense"),
    "parser-bv0-niagara":
        Case("parser",       NIAGARA, "timing", "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "qsort-mup":
        Case("qsort",        MUP,     "o3",     None,     None,          "smoke", "smarts-dense"),
    "blackscholes-mup":
        Case("blackscholes", MUP,     "o3",     None,     None,          "smoke", "smarts-dense"),
    "mcf-bv0-mup":
        Case("mcf",          MUP,     "o3",     "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "gzip-bv0-mup":
        Case("gzip",         MUP,     "o3",     "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "qsort-niagara":
        Case("qsort",        NIAGARA, "timing", None,     None,          "smoke", "smarts-dense"),
    "mcf-bv0-niagara":
        Case("mcf",          NIAGARA, "timing", "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "fft-mup":
        Case("fft",          MUP,     "o3",     None,     None,          "smoke", "smarts-default"),
    "sha-mup":
        Case("sha",          MUP,     "o3",     None,     None,          "smoke", "smarts-default"),
    "blackscholes-niagara":
        Case("blackscholes", NIAGARA, "timing", None,     None,          "smoke", "smarts-dense"),
    "gzip-bv0-niagara":
        Case("gzip",         NIAGARA, "timing", "bv_0",   "quantum-2ms", "smoke", "smarts-dense"),
    "fft-niagara":
        Case("fft",          NIAGARA, "timing", None,     None,          "smoke", "smarts-default"),
}
MODES = ("full", "sampled", "misses")
METRICS = ("ipc", "l1i_mpki", "l1d_mpki", "llc_mpki")
TARGET = 0.03          # issue 20: IPC and MPI within 3 % of the full run


def request(case: Case, mode: str) -> RunRequest:
    """The run of ``case`` in ``mode`` (full, sampled, misses), built as ``run.py run``
    builds it (no label: a run is the same run whoever asks for it)."""
    if case.corunner is None:
        job = WorkloadRequest(case.workload, size=case.size, cpus="0")
        background = ()
    else:
        job = WorkloadRequest(case.workload, size=case.size, cpus="0",
                              duration=kazempour.REGION_S["smoke"],
                              warmup=kazempour.WARMUP_S["smoke"], **kazempour.SHARED_CPU)
        background = (WorkloadRequest(case.corunner, size="paper", cpus="0",
                                      **kazempour.SHARED_CPU),)
    base = RunRequest(machine=case.machine, backend="gem5", cpu=case.cpu, jobs=(job,),
                      background=background, policy=case.policy,
                      attribute_tasks=case.corunner is not None)
    if mode == "sampled":
        return dataclasses.replace(base, sampling=case.sampling)
    if mode == "misses":
        return dataclasses.replace(base, cpu="atomic")
    return base


def numbers(job: dict, llc: str) -> dict:
    """IPC and MPKI of one job's region as the results give them (``whole``: the busiest
    CPU's IPC and the machine's MPKI; ``task``: the job's own, with attribution), with the
    sampled run's 95 % half-widths (``<metric>_ci``) where there are some. ``llc`` is the
    plan's name of the last level; the record calls it ``llc``."""
    def pick(src: dict, llc_key: str) -> dict:
        out = {}
        for m in METRICS:
            key = llc_key + "_mpki" if m == "llc_mpki" else m
            if key in src:
                out[m] = src[key]
            ci = key.replace("_mpki", "_mpi") + "_ci"
            if ci in src:   # the interval of the MPI, in MPKI
                out[m + "_ci"] = src[ci] * (1 if m == "ipc" else 1000)
        return out
    g = job.get("gem5", {})
    out = {"whole": pick(g, llc), "insts": g.get("insts"), "sim_s": g.get("sim_seconds")}
    for key in ("windows", "measured_share"):
        if key in g:
            out[key] = g[key]
    region = {m: g[k] for m in METRICS[1:]
              if (k := (llc if m == "llc_mpki" else m[:-5]) + "_mpki_region") in g}
    if region:      # the sampled run's functionally warmed caches over the whole region
        out["whole_region"] = region
    task = job.get("gem5_task")
    if task:        # full and misses-only runs name the last level "llc", sampled ones llc
        out["task"] = pick(task, "llc" if "llc_mpki" in task else llc)
        out["task"]["insts"] = task.get("insts")
        if "windows" in task:
            out["task"]["windows"] = task["windows"]
    return out


MSHR_HITS = re.compile(r"^board\.cache_hierarchy\.(l\w+)_\d+\.demandMshrHits::total$")


def primary_mpki(dump: dict, whole: dict, insts: float, llc: str) -> dict:
    """The machine's MPKI of primary misses (those that allocate an MSHR and fetch a
    line) from a region's statistics dump: gem5's ``demandMisses`` of a timing-mode cache
    also counts the accesses that merge into an MSHR already waiting for their line
    (``demandMshrHits``), which Atomic cores, whose accesses complete at once, never
    make. ``whole``: the region's MPKI of all demand misses (metric names of METRICS)."""
    hits: dict[str, float] = {}
    for name, value in dump.items():
        m = MSHR_HITS.match(name)
        if m and isinstance(value, (int, float)):
            cache = "llc" if m[1] == llc else m[1]
            hits[cache] = hits.get(cache, 0.0) + value
    return {m: whole[m] - 1000.0 * hits.get(m[:-5], 0.0) / insts
            for m in METRICS[1:] if m in whole and insts}


def rel_error(estimate: float | None, reference: float | None) -> float | None:
    """(estimate - reference) / reference; None where either is missing or the reference
    is zero."""
    if estimate is None or reference is None or reference == 0:
        return None
    if any(isinstance(v, float) and math.isnan(v) for v in (estimate, reference)):
        return None
    return (estimate - reference) / reference


def compare(full: dict, sampled: dict | None, misses: dict | None) -> dict:
    """Per scope (whole, task) and metric: the sampled and misses-only relative errors and
    whether the full value lies inside the sampled interval (``in_ci``)."""
    out = {}
    for scope in ("whole", "task"):
        ref = full.get(scope)
        if not ref:
            continue
        per = {}
        for m in METRICS:
            if m not in ref:
                continue
            entry = {}
            s = (sampled or {}).get(scope, {})
            if m in s:
                entry["sampled_err"] = rel_error(s[m], ref[m])
                half = s.get(m + "_ci")
                if half is not None and not math.isnan(half):
                    entry["in_ci"] = abs(s[m] - ref[m]) <= half
            a = (misses or {}).get(scope, {})
            if m != "ipc" and m in a:   # an Atomic core's IPC means nothing
                entry["misses_err"] = rel_error(a[m], ref[m])
                primary = full.get(scope + "_primary", {})
                if m in primary:
                    entry["misses_primary_err"] = rel_error(a[m], primary[m])
            per[m] = entry
        out[scope] = per
    return out


def speedups(host: dict) -> dict:
    """Full host seconds over sampled (and over misses-only), for the region and the
    whole gem5 process, and the process's CPU seconds where all three runs have them."""
    out = {}
    full = host.get("full") or {}
    for mode in ("sampled", "misses"):
        other = host.get(mode) or {}
        for part in ("roi_host_s", "total_host_s", "process_cpu_s"):
            if full.get(part) and other.get(part):
                out[f"{mode}_{part}"] = full[part] / other[part]
    return out


def run_mode(case: Case, mode: str, reuse_only: bool = False) -> dict:
    """One run of the case (reused when done; with ``reuse_only`` only then): its numbers,
    host seconds and sampling cost, or why it failed or was not run."""
    started, cpu_before = time.time(), _children_cpu_s()
    try:
        prepared = prepare(request(case, mode), progress=print)
        reused = (prepared.dir / "results.json").is_file()
        if reuse_only and not reused:
            return {"error": f"not run (--reuse-only): {prepared.run_id}"}
        run_dir = execute(prepared, progress=print)
    except Exception as e:  # noqa: BLE001 - a failed run is a result of the benchmark
        traceback.print_exc()
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    cpu_s = _children_cpu_s() - cpu_before
    results = json.loads((run_dir / "results.json").read_text())
    info = json.loads((run_dir / "gem5.json").read_text())
    llc = load_machine(case.machine).llc.name
    (job,) = [j for j in results["jobs"] if j["workload"] == case.workload]
    out = {"run": run_dir.name, "ok": results["ok"], "errors": results["errors"][:3],
           **measure(info), **numbers(job, llc)}
    if mode == "full":  # a sampled run's dump mixes Atomic and detailed cores
        dumps = [d for d in json.loads((run_dir / "stats.json").read_text())
                 if d.get("schedlab.roi")]
        if len(dumps) == 1 and out.get("insts"):
            out["whole_primary"] = primary_mpki(dumps[0], out["whole"], out["insts"], llc)
    cost = (job.get("gem5_sampling") or {}).get("cost")
    if cost:
        out["sampling_cost"] = cost
    # Host seconds are wall-clock seconds on a shared host; the CPU seconds of the gem5
    # process (known for a run made now, unless it booted the checkpoint first) are not
    # stretched by the other processes, and the load says how shared the host was.
    booted = datetime.fromisoformat(info["checkpoint"]["created"].replace("Z", "+00:00"))
    if not reused and booted.timestamp() < started:
        out["process_cpu_s"] = round(cpu_s, 1)
        out["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
    return out


def _children_cpu_s() -> float:
    """CPU seconds of this process's waited-for children (the gem5 processes) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def record(name: str, reuse_only: bool = False) -> dict:
    case = CASES[name]
    runs = {mode: run_mode(case, mode, reuse_only) for mode in MODES}
    usable = {m: r for m, r in runs.items() if "error" not in r}
    rec = {"case": name, **dataclasses.asdict(case), "runs": runs}
    if "full" in usable:
        rec["errors"] = compare(usable["full"], usable.get("sampled"), usable.get("misses"))
        rec["speedup"] = speedups(usable)
    return rec


# ----------------------------------------------------------------------------- tables
def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f} %"


def _value(x: float | None, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits (IPC 0.2013, MPKI 198.5 or 0.8645)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}"


def _times(x: float | None) -> str:
    return "-" if x is None else f"{_value(x, 2)}x"


def _sampled_cell(run: dict, scope: str, m: str, err: dict) -> str:
    s = run.get(scope, {})
    if m not in s:
        return "-"
    half = s.get(m + "_ci")
    mark = "" if err.get("in_ci", True) else " (outside)"
    ci = f" ± {_value(half, 2)}" if half is not None and not math.isnan(half) else ""
    return f"{_value(s[m])}{ci} ({_pct(err.get('sampled_err'))}){mark}"


def accuracy_table(records: list[dict]) -> str:
    """One row per case and scope: the full value, the sampled estimate with its 95 %
    half-width and error, and for MPKI the misses-only run's error."""
    head = ["case", "scope", "windows", "IPC full", "IPC sampled"]
    for c in ("L1-I", "L1-D", "LLC"):
        head += [f"{c} MPKI full", f"{c} sampled", f"{c} misses-only"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        runs = r["runs"]
        full, sampled, misses = (runs.get(m, {}) for m in MODES)
        if "error" in full or "errors" not in r:
            lines.append(f"| {r['case']} | full run failed: {full.get('error', '?')} |")
            continue
        for scope in ("whole", "task"):
            if scope not in r["errors"]:
                continue
            errs = r["errors"][scope]
            windows = (sampled.get("windows") if scope == "whole"
                       else sampled.get("task", {}).get("windows"))
            row = [r["case"], "busiest CPU / machine" if scope == "whole" else "task",
                   str(windows) if windows is not None else "-"]
            for m in METRICS:
                e = errs.get(m, {})
                row += [_value(full[scope].get(m)), _sampled_cell(sampled, scope, m, e)]
                if m != "ipc":
                    a = misses.get(scope, {}).get(m)
                    primary = (f"; {_pct(e['misses_primary_err'])} of primary"
                               if e.get("misses_primary_err") is not None else "")
                    row.append("-" if a is None else
                               f"{_value(a)} ({_pct(e.get('misses_err'))}{primary})")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def cost_table(records: list[dict]) -> str:
    """Per case: the region's instructions and simulated ms in each run, the host seconds
    of the region and of the whole gem5 process, the process's CPU seconds, and the
    speed-ups."""
    lines = ["| case | machine (cpu) | region insts full / sampled / misses-only "
             "| simulated ms full / sampled / misses-only "
             "| region host s full / sampled / misses-only | of it on detailed cores "
             "(switches) | speed-up region: sampled, misses-only "
             "| gem5 process s full / sampled / misses-only | speed-up process "
             "| gem5 process CPU s full / sampled / misses-only | speed-up CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        runs = [r["runs"].get(m, {}) for m in MODES]
        sp = r.get("speedup", {})
        cost = runs[1].get("sampling_cost") or {}
        detailed = (f"{cost['detailed_host_s']:.1f} ({cost['switches']}, "
                    f"{cost['switch_host_s']:.2f} s)" if cost else "-")

        def each(key: str, fmt: str) -> str:
            return " / ".join("-" if run.get(key) is None else format(
                run[key] * (1e3 if key == "sim_s" else 1), fmt) for run in runs)
        lines.append(
            f"| {r['case']} | {r['machine']} ({r['cpu']}) | {each('insts', ',.0f')} "
            f"| {each('sim_s', '.2f')} | {each('roi_host_s', '.1f')} | {detailed} "
            f"| {_times(sp.get('sampled_roi_host_s'))}, {_times(sp.get('misses_roi_host_s'))} "
            f"| {each('total_host_s', '.0f')} | {_times(sp.get('sampled_total_host_s'))} "
            f"| {each('process_cpu_s', '.0f')} | {_times(sp.get('sampled_process_cpu_s'))} |")
    return "\n".join(lines)


def summary(records: list[dict]) -> str:
    """How many sampled (and misses-only) estimates are within TARGET of the full run, and
    how many full values lie inside the sampled intervals."""
    within = total = inside = with_ci = m_within = m_total = p_within = p_total = 0
    for r in records:
        for per in r.get("errors", {}).values():
            for e in per.values():
                if e.get("sampled_err") is not None:
                    total += 1
                    within += abs(e["sampled_err"]) <= TARGET
                if "in_ci" in e:
                    with_ci += 1
                    inside += e["in_ci"]
                if e.get("misses_err") is not None:
                    m_total += 1
                    m_within += abs(e["misses_err"]) <= TARGET
                if e.get("misses_primary_err") is not None:
                    p_total += 1
                    p_within += abs(e["misses_primary_err"]) <= TARGET
    return (f"Sampled estimates within {100 * TARGET:.0f} % of the full run: {within} of "
            f"{total}; full value inside the sampled 95 % interval: {inside} of {with_ci}; "
            f"misses-only MPKI within {100 * TARGET:.0f} %: {m_within} of {m_total} "
            f"(of the full runs' primary misses: {p_within} of {p_total}).")


def report(records: list[dict]) -> str:
    return "\n\n".join((accuracy_table(records), cost_table(records), summary(records)))


def case_table() -> str:
    lines = ["| case | workload | machine | cpu | co-runner | policy | size | sampling |",
             "|---|---|---|---|---|---|---|---|"]
    for name, c in CASES.items():
        lines.append(f"| {name} | {c.workload} | {c.machine} | {c.cpu} | "
                     f"{c.corunner or '-'} | {c.policy or '-'} | {c.size} | {c.sampling} |")
    return "\n".join(lines)


def merged(path: Path | None, records: list[dict]) -> list[dict]:
    """The records of ``path`` (if any) with those of the cases run now replaced or added,
    in the order of CASES."""
    old = gem5_records([path]) if path is not None and path.is_file() else []
    by_case = {r["case"]: r for r in old} | {r["case"]: r for r in records}
    order = list(CASES) + sorted(set(by_case) - set(CASES))
    return [by_case[c] for c in order if c in by_case]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=None,
                   help="comma-separated case names (default: all; --list shows them)")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--reuse-only", action="store_true",
                   help="record only runs already in the results store (start no gem5)")
    add_record_options(p)
    args = p.parse_args()
    if args.list:
        print(case_table())
        return 0
    if (files := report_files(args)) is not None:
        print(report(gem5_records(files)))
        return 0
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        p.error(f"unknown cases {', '.join(unknown)}; --list shows them")
    from schedlab.backends.gem5.binary import probe
    binary = probe()
    done: list[dict] = []
    for name in names:
        done.append(record(name, args.reuse_only))
        # Saved after every case: a case costs minutes, a stopped benchmark keeps its cases.
        save_gem5_records(args.json, binary, merged(args.json, done))
    print(report(merged(args.json, done) if args.json else done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
