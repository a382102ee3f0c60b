"""Processor pools in the guest kernel (the sched/pools kernel-patches), host side: the pools a run
writes to ``kernel.sched_pool_cpus`` and ``/proc/sched_pools`` read back.

The kernel takes pools as CPU lists separated by colons (``4-7:8-11:12-15``) and refuses
empty or overlapping pools with a line in its log; :func:`parse_pool_cpus` refuses the same
host-side, in one line, before a guest boots. CPUs in no pool are never given to jobs: that
is how a machine keeps CPUs for the system (Hector's station 0, ``reserved_cores`` in the
catalogue).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedlab.errors import UserError
from schedlab.guest.numa import format_cpulist, parse_cpulist
from schedlab.machine import MachineSpec

# kernel.sched_pool_placement: the value is the index (sched_pool_placement= takes the name).
PLACEMENTS = ("first-fit", "best-fit", "worst-fit", "worst-fit-jobs")


def job_cpus(machine: MachineSpec) -> tuple[int, ...]:
    """The CPUs jobs may use: all but the machine's reserved cores."""
    return tuple(c for c in range(machine.cores) if c not in machine.reserved_cores)


def pool_cpus(cpus: tuple[int, ...] | list[int], size: int) -> str:
    """``cpus`` cut into pools of ``size`` in order, as kernel.sched_pool_cpus takes them:
    pool_cpus(range(4, 16), 4) == '4-7:8-11:12-15'."""
    cpus = list(cpus)
    if size < 1 or not cpus or len(cpus) % size:
        raise UserError(f"cannot cut {len(cpus)} CPUs into pools of {size}; "
                        f"use a size that divides {len(cpus)}")
    return ":".join(format_cpulist(cpus[i:i + size]) for i in range(0, len(cpus), size))


def parse_pool_cpus(text: str) -> tuple[tuple[int, ...], ...]:
    """'4-7:8-11' -> ((4, 5, 6, 7), (8, 9, 10, 11)); '' -> no pools. UserError for what the
    kernel refuses: a pool that is not a CPU list or shares CPUs with an earlier one."""
    text = text.strip()
    if not text:
        return ()
    pools: list[tuple[int, ...]] = []
    seen: set[int] = set()
    for i, part in enumerate(text.split(":")):
        try:
            cpus = parse_cpulist(part)
        except UserError:
            raise UserError(f"pool {i} {part!r} of {text!r} is not a CPU list "
                            f"(pools are CPU lists separated by ':', e.g. '4-7:8-11')") from None
        if seen.intersection(cpus):
            raise UserError(f"pool {i} {part!r} of {text!r} shares CPU "
                            f"{min(seen.intersection(cpus))} with an earlier pool")
        seen.update(cpus)
        pools.append(cpus)
    return tuple(pools)


@dataclass(frozen=True)
class Pool:
    cpus: tuple[int, ...]
    free: int
    jobs: int


@dataclass(frozen=True)
class PoolState:
    """/proc/sched_pools: the switch, the counters, the pools and each CPU's holder."""

    enabled: bool
    placement: str
    placed: dict[str, int]          # threads placed by each policy (first threads and spills)
    expansions: int                 # later threads placed in a pool of their job
    spills: int                     # later threads placed by the policy, their pools full
    failures: int                   # threads refused: every CPU taken
    pools: tuple[Pool, ...]
    holders: dict[int, tuple[int, int] | None]   # cpu -> (tgid, pid), None when free
    pool_of: dict[int, int]                      # cpu -> pool index

    def cpus_of(self, tgid: int) -> list[int]:
        """The CPUs job ``tgid`` holds, in order."""
        return sorted(c for c, h in self.holders.items() if h and h[0] == tgid)

    def pools_of(self, tgid: int) -> dict[int, int]:
        """pool index -> how many threads of job ``tgid`` it holds."""
        out: dict[int, int] = {}
        for c in self.cpus_of(tgid):
            out[self.pool_of[c]] = out.get(self.pool_of[c], 0) + 1
        return out


_POOL_LINE = re.compile(r"pool (\d+): cpus (\S+) free (\d+) jobs (\d+)")
_CPU_LINE = re.compile(r"cpu (\d+): pool (\d+) (?:tgid (\d+) pid (\d+)|free)")


def parse_sched_pools(text: str) -> PoolState:
    """Parse /proc/sched_pools; UserError naming the first line it does not understand."""
    fields: dict[str, str] = {}
    pools: list[Pool] = []
    holders: dict[int, tuple[int, int] | None] = {}
    pool_of: dict[int, int] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if m := _POOL_LINE.fullmatch(line):
            pools.append(Pool(parse_cpulist(m[2]), int(m[3]), int(m[4])))
        elif m := _CPU_LINE.fullmatch(line):
            cpu = int(m[1])
            pool_of[cpu] = int(m[2])
            holders[cpu] = (int(m[3]), int(m[4])) if m[3] else None
        elif ": " in line:
            key, _, value = line.partition(": ")
            fields[key] = value
        else:
            raise UserError(f"/proc/sched_pools: cannot read line {line!r}")
    try:
        return PoolState(
            enabled=fields["enabled"] == "1", placement=fields["placement"],
            placed={p: int(fields[f"placed {p}"]) for p in PLACEMENTS},
            expansions=int(fields["expansions"]), spills=int(fields["spills"]),
            failures=int(fields["failures"]), pools=tuple(pools), holders=holders,
            pool_of=pool_of)
    except (KeyError, ValueError) as e:
        raise UserError(f"/proc/sched_pools: missing or bad field {e}") from None
