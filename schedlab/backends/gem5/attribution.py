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

    # Where counters go that a region's end leaves with a CPU whose next switch never came.
    UNSETTLED = -1

    def __init__(self) -> None:
        self.last: dict[int, dict[str, float]] = {}
        self.totals: dict[int, dict[str, float]] = {}
        # Per CPU: closed regions' totals and the counters between the CPU's last switch
        # and each region's end, owed to whichever task is running then (see
        # close_region); several when regions close faster than the CPU switches (the
        # measured windows of a sampled run).
        self.owed: dict[int, list[tuple[dict, dict[str, float]]]] = {}
        # Per CPU: what it did on cores it has since left (handover), for its next switch.
        self.carried: dict[int, dict[str, float]] = {}

    @staticmethod
    def decode(code: int) -> tuple[int, int]:
        """(pid, cpu) from the m5 op's code."""
        return code >> 8, code & 0xFF

    def switch(self, cpu: int, prev_pid: int, counters: dict[str, float]) -> None:
        for closed, residual in self.owed.pop(cpu, []):
            _add(closed.setdefault(prev_pid, {"switches": 0}), residual)
        base = self.last.get(cpu)
        if base is not None:
            t = self.totals.setdefault(prev_pid, {"switches": 0})
            t["switches"] += 1
            _add(t, self._since(cpu, base, counters))
        self.last[cpu] = dict(counters)

    def rebase(self, cpu: int, counters: dict[str, float]) -> None:
        """Take ``counters`` as the CPU's new starting point (after a statistics reset some
        counters restart from zero, others, like committed instructions, do not)."""
        self.last[cpu] = dict(counters)
        self.carried.pop(cpu, None)

    def handover(self, cpu: int, before: dict[str, float], after: dict[str, float]) -> None:
        """The CPU moves to other cores in the middle of a task's turn (sampling switches
        between Atomic and detailed cores, whose counters are their own): what it did
        since its last switch, ``before`` as the old cores read, is carried to its next
        switch, and counting goes on from the new cores' ``after``."""
        base = self.last.get(cpu)
        if base is not None:
            _add(self.carried.setdefault(cpu, {}), {k: v - base.get(k, 0)
                                                   for k, v in before.items()})
        self.last[cpu] = dict(after)

    def _since(self, cpu: int, base: dict[str, float], counters: dict[str, float]) -> dict:
        """What the CPU did since ``base``, with what it carried over from other cores."""
        delta = {k: v - base.get(k, 0) for k, v in counters.items()}
        _add(delta, self.carried.pop(cpu, {}))
        return delta

    def clear(self) -> None:
        """Forget the totals (start of a new region of interest)."""
        self.totals = {}

    def close_region(self, counters_by_cpu: dict[int, dict[str, float]]) -> dict:
        """End a region of interest at the CPUs' current counters and return its totals.

        What each CPU did since its last switch belongs to the task running on it now, which
        only that CPU's next switch names: it is owed until then and added to the returned
        totals (a dict the caller keeps, so it is complete once every CPU has switched)."""
        closed = self.totals
        for cpu, counters in counters_by_cpu.items():
            base = self.last.get(cpu)
            if base is not None:
                self.owed.setdefault(cpu, []).append((closed, self._since(cpu, base, counters)))
            self.last[cpu] = dict(counters)
        self.totals = {}
        return closed

    def settle_owed(self) -> None:
        """At the end of the simulation: counters still owed (a CPU that never switched
        again) go to the UNSETTLED pseudo-task of their region, so totals still add up."""
        for owed in self.owed.values():
            for closed, residual in owed:
                _add(closed.setdefault(self.UNSETTLED, {"switches": 0}), residual)
        self.owed = {}

    def to_dict(self) -> dict:
        return by_pid(self.totals)


def _add(total: dict[str, float], delta: dict[str, float]) -> None:
    for k, v in delta.items():
        total[k] = total.get(k, 0) + v


def by_pid(totals: dict) -> dict:
    """Totals keyed by pid as JSON keys, in pid order."""
    return {str(pid): t for pid, t in sorted(totals.items())}
