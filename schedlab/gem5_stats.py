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
_CORE = re.compile(r"^board\.processor\.cores(\d*)\.core\.")


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
    for name, value in dump.items():
        m = _CORE.match(name)
        if not m:
            continue
        i = int(m.group(1) or 0)  # a one-core processor names its core "cores"
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


class TaskAttribution:
    """Per-task cycles, instructions and cache misses from per-CPU counters at context switches.

    The guest kernel (with the context-switch m5 op of the scheduler patches, see
    configs/README.md) executes ``m5_fail(0, prev_pid << 8 | cpu)`` as it switches away from
    ``prev_pid`` on ``cpu``; the gem5 run script reads that CPU's counters there and calls
    :meth:`switch`. The difference since the previous switch (or reset) on the same CPU is
    what ``prev_pid`` consumed, because exactly one task runs on a CPU between two switches.
    Counters are cumulative, so after a statistics reset (``m5 workbegin``) every CPU is
    re-based with :meth:`rebase`. Pid 0 is the idle task of every CPU.
    """

    def __init__(self) -> None:
        self.last: dict[int, dict[str, float]] = {}
        self.totals: dict[int, dict[str, float]] = {}

    @staticmethod
    def decode(code: int) -> tuple[int, int]:
        """(pid, cpu) from the m5 op's code."""
        return code >> 8, code & 0xFF

    def switch(self, cpu: int, prev_pid: int, counters: dict[str, float]) -> None:
        base = self.last.get(cpu)
        if base is not None:
            t = self.totals.setdefault(prev_pid, {"switches": 0})
            t["switches"] += 1
            for k, v in counters.items():
                t[k] = t.get(k, 0) + (v - base.get(k, 0))
        self.last[cpu] = dict(counters)

    def rebase(self, cpu: int, counters: dict[str, float]) -> None:
        """Take ``counters`` as the CPU's new starting point (after a statistics reset some
        counters restart from zero, others, like committed instructions, do not)."""
        self.last[cpu] = dict(counters)

    def clear(self) -> None:
        """Forget the totals (start of a new region of interest)."""
        self.totals = {}

    def to_dict(self) -> dict:
        return {str(pid): t for pid, t in sorted(self.totals.items())}
