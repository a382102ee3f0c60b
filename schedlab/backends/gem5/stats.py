"""Parse gem5's stats.txt into data, and derive the per-core numbers the studies use.

gem5 appends one block per statistics dump (``m5 dumpstats``, ``m5 workend`` through the
run script, and a final dump at exit) between ``Begin`` / ``End Simulation Statistics``
lines. Each stat line is ``name value [pct cum] # description (unit)``; distributions and
vectors add ``name::bucket`` lines. :func:`parse_stats` returns one dict per dump, mapping
names to numbers (``nan``/``inf`` as floats, text values kept as strings).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"
# Cores a run restored into (cores<i>) and, with fast-forward, the detailed cores switched
# in at the region of interest (detailed<i>), whose numbers then are the ones that count.
_CORE = re.compile(r"^board\.processor\.(cores|detailed)(\d*)\.core\.")


def _number(text: str):
    try:
        if re.fullmatch(r"[-+]?\d+", text):
            return int(text)
        return float(text)  # handles nan, inf, -nan, 1.5e-07
    except ValueError:
        return text


def parse_stats(text: str) -> list[dict]:
    """Every dump of a stats.txt, in order."""
    dumps: list[dict] = []
    current: dict | None = None
    for line in text.splitlines():
        if line.startswith("---------- Begin Simulation Statistics"):
            current = {}
            continue
        if line.startswith("---------- End Simulation Statistics"):
            if current is not None:
                dumps.append(current)
            current = None
            continue
        if current is None:
            continue
        body = line.split("#", 1)[0].split()
        if len(body) >= 2:
            current[body[0]] = _number(body[1])
    return dumps


def parse_stats_file(path: Path) -> list[dict]:
    return parse_stats(Path(path).read_text(errors="replace")) if Path(path).exists() else []


def _f(x) -> float:
    return float(x) if isinstance(x, (int, float)) else math.nan


def core_summary(dump: dict) -> dict[int, dict]:
    """Per core: cycles, committed instructions, IPC, and L1/L2/L3 demand misses.

    Cache misses are attributed to the cores of each instance from the object names
    (l1d_<i>/l1i_<i> are private; shared instances are reported under ``caches``)."""
    cores: dict[int, dict] = {}
    detailed = any(name.startswith("board.processor.detailed") for name in dump)
    for name, value in dump.items():
        m = _CORE.match(name)
        if not m or (detailed and m.group(1) == "cores"):
            continue
        i = int(m.group(2) or 0)  # a one-core processor names its core "cores"
        rest = name[m.end():]
        c = cores.setdefault(i, {})
        if rest == "numCycles":
            c["cycles"] = value
        elif rest in ("committedInsts", "commitStats0.numInsts", "exec_context.thread_0.numInsts",
                      "thread_0.numInsts"):
            c.setdefault("insts", value)
        elif rest == "ipc":
            c["ipc"] = value
    for c in cores.values():
        if "ipc" not in c and c.get("cycles"):
            c["ipc"] = _f(c.get("insts")) / _f(c["cycles"])
    return cores


def cache_summary(dump: dict) -> dict[str, dict]:
    """Per cache instance (``l2_0``, ...): demand accesses, hits, misses, miss rate."""
    out: dict[str, dict] = {}
    pat = re.compile(r"^board\.cache_hierarchy\.(l\d\w*_\d+)\.(demandAccesses|demandHits|"
                     r"demandMisses|demandMissRate)::total$")
    for name, value in dump.items():
        m = pat.match(name)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = value
    return out


def numa_traffic(dump: dict, requesters) -> dict[str, float]:
    """Memory accesses of one region by NUMA latency class, from the statistics of the NUMA
    links (``req_<llc>_bank<i>``, configs/components/caches.py ``NumaLinkCache``).

    ``requesters`` are the plan's ``MemoryPlan.requesters``. Returns
    ``numa_<class>_accesses`` for local, node (another bank of the same node) and remote,
    and ``numa_local_share``; empty for machines without NUMA links."""
    counts: dict[str, float] = {}
    for r in requesters:
        for bank, cls in enumerate(r.bank_class):
            n = dump.get(f"board.cache_hierarchy.{r.link(bank)}.demandAccesses::total")
            if n is not None:
                counts[cls] = counts.get(cls, 0.0) + _f(n)
    if not counts:
        return {}
    out = {f"numa_{cls}_accesses": counts.get(cls, 0.0) for cls in ("local", "node", "remote")}
    total = sum(counts.values())
    out["numa_local_share"] = counts.get("local", 0.0) / total if total else math.nan
    return out


def region_metrics(dump: dict, numa_requesters=()) -> dict[str, float]:
    """The numbers a results table shows for one region of interest (one dump).

    ``ipc`` and ``cycles`` are the busiest core's (the one that committed most instructions:
    the workload's, when it is pinned or alone); ``insts`` and the misses count every core,
    so ``<cache>_mpki`` (misses per 1000 instructions, summed over the instances of a
    catalogue cache such as l2_0 and l2_1) describes the whole machine. On NUMA machines
    (``numa_requesters`` = the plan's memory requesters) the memory accesses by latency
    class are added (:func:`numa_traffic`). Per-task numbers come from task attribution
    instead (``run.py run --attribute-tasks``)."""
    cores = core_summary(dump)
    out: dict[str, float] = {"sim_seconds": _f(dump.get("simSeconds"))}
    if cores:
        busy = max(cores.values(), key=lambda c: _f(c.get("insts", 0)))
        out["ipc"] = _f(busy.get("ipc"))
        out["cycles"] = _f(busy.get("cycles"))
    insts = sum(_f(c.get("insts", 0)) for c in cores.values())
    out["insts"] = insts
    misses: dict[str, float] = {}
    for instance, s in cache_summary(dump).items():
        cache = instance.rsplit("_", 1)[0]
        misses[cache] = misses.get(cache, 0.0) + _f(s.get("demandMisses"))
    for cache, m in sorted(misses.items()):
        out[f"{cache}_misses"] = m
        out[f"{cache}_mpki"] = 1000.0 * m / insts if insts else math.nan
    out.update(numa_traffic(dump, numa_requesters))
    return out


def task_metrics(totals: dict[str, float]) -> dict[str, float]:
    """IPC, misses per instruction (``_mpi``, as the papers define it) and per
    kilo-instruction of one task from its attributed totals (attribution.TaskAttribution:
    cycles, insts, l1d_misses, l1i_misses, llc_misses, switches), and the miss rate
    (misses per access) of the loads and stores whose accesses are counted."""
    insts, cycles = _f(totals.get("insts", 0)), _f(totals.get("cycles", 0))
    out = {"insts": insts, "cycles": cycles, "switches": _f(totals.get("switches", 0)),
           "ipc": insts / cycles if cycles else math.nan}
    for key, value in sorted(totals.items()):
        if key.endswith("_misses"):
            out[key] = _f(value)
            per_inst = _f(value) / insts if insts else math.nan
            what = key[:-len("_misses")]
            out[what + "_mpi"] = per_inst
            out[what + "_mpki"] = 1000.0 * per_inst
            # Where the accesses are counted too (loads, stores): misses per access.
            accesses = _f(totals.get(what + "_accesses", 0))
            if what + "_accesses" in totals:
                out[what + "_accesses"] = accesses
                out[what + "_miss_rate"] = _f(value) / accesses if accesses else math.nan
    return out
