"""Per-task attribution of gem5's per-CPU counters, at the guest's context switches.

This module runs inside gem5 (``configs/schedlab_gem5.py`` imports it): standard library only.
"""

from __future__ import annotations


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
