"""NUMA layouts on the guest kernel's command line (kernel-patches/ x86/numa_emulation).

NUMA from the command line (patch x86/numa_emulation): firmware without an SRAT (gem5's X86
board; QEMU without ``-numa``) gives Linux one node. The guest is then told the layout with

    numa=fake=N:d00,d01,...,d(N-1)(N-1)  numa_emu_cpus=<cpulist>:<cpulist>:...

``numa=fake=N`` splits memory into N equal nodes (upstream Linux); its distance list (row-major,
upstream too) gives the scheduler its NUMA levels; ``numa_emu_cpus`` (our patch) names the CPUs
of node 0, 1, ... The kernel rejects a bad ``numa_emu_cpus`` with a log line and falls back to
no emulation; this module rejects bad layouts host-side first, with a one-line UserError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedlab.errors import UserError
from schedlab.machine import format_cpus as format_cpulist

LOCAL_DISTANCE = 10
DEFAULT_REMOTE_DISTANCE = 20
# arch/x86/mm/numa_emulation.c: FAKE_NODE_MIN_SIZE; smaller nodes make numa=fake merge nodes.
FAKE_NODE_MIN_MIB = 32
# Linux x86-64 NODES_SHIFT default (MAX_NUMNODES = 64).
MAX_NODES = 64

_CPULIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


@dataclass(frozen=True)
class NumaLayout:
    """A NUMA layout as the kernel command line states it."""

    nodes: tuple[tuple[int, ...], ...]
    distances: tuple[tuple[int, ...], ...]


def parse_cpulist(text: str) -> tuple[int, ...]:
    """'0-2,5' -> (0, 1, 2, 5); UserError on anything Linux's cpulist_parse would reject."""
    if not _CPULIST.match(text):
        raise UserError(f"bad CPU list {text!r}; use the Linux cpulist form, e.g. '0-3,8'")
    cpus: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise UserError(f"bad CPU range {part!r} in {text!r}: end before start")
        cpus.extend(range(a, b + 1))
    if len(set(cpus)) != len(cpus):
        raise UserError(f"CPU list {text!r} names a CPU twice")
    return tuple(cpus)


def _check_layout(nodes: list[list[int]], distances: list[list[int]]) -> None:
    n = len(nodes)
    if not 1 <= n <= MAX_NODES:
        raise UserError(f"NUMA layout has {n} nodes; the guest kernel supports 1..{MAX_NODES}")
    seen: set[int] = set()
    for i, cpus in enumerate(nodes):
        if not cpus:
            raise UserError(f"NUMA node {i} has no CPUs; every node needs at least one")
        if any(not isinstance(c, int) or c < 0 for c in cpus):
            raise UserError(f"NUMA node {i} has a CPU that is not a non-negative integer: {cpus}")
        dup = seen.intersection(cpus)
        if dup or len(set(cpus)) != len(cpus):
            raise UserError(f"CPU {sorted(dup or cpus)[0]} is in more than one NUMA node slot")
        seen.update(cpus)
    if len(distances) != n or any(len(row) != n for row in distances):
        raise UserError(f"NUMA distance matrix must be {n} x {n} for {n} nodes")
    for i in range(n):
        for j in range(n):
            d = distances[i][j]
            if not isinstance(d, int):
                raise UserError(f"NUMA distance [{i}][{j}] = {d!r} is not an integer")
            if i == j and d != LOCAL_DISTANCE:
                raise UserError(f"NUMA distance [{i}][{i}] must be {LOCAL_DISTANCE} "
                                f"(Linux rejects other local distances), got {d}")
            if i != j and not LOCAL_DISTANCE < d <= 255:
                raise UserError(f"NUMA distance [{i}][{j}] = {d} must be in 11..255")
            if d != distances[j][i]:
                raise UserError(f"NUMA distance matrix is not symmetric at [{i}][{j}]")


def numa_boot_args(nodes: list[list[int]], node_mem_mib: list[int] | None = None,
                   distances: list[list[int]] | None = None) -> list[str]:
    """Kernel arguments that make the guest build this NUMA layout without firmware tables.

    ``nodes[i]`` lists the CPUs of node i. ``node_mem_mib`` (the memory the guest really has per
    node, if known) is only checked: ``numa=fake=N`` splits memory into N equal parts, so the
    sizes must be equal and at least FAKE_NODE_MIN_MIB. ``distances`` defaults to 10 local / 20
    remote. One node needs no arguments ([] is returned).
    """
    nodes = [list(n) for n in nodes]
    n = len(nodes)
    if distances is None:
        distances = [[LOCAL_DISTANCE if i == j else DEFAULT_REMOTE_DISTANCE for j in range(n)]
                     for i in range(n)]
    _check_layout(nodes, distances)
    if node_mem_mib is not None:
        if len(node_mem_mib) != n:
            raise UserError(f"{len(node_mem_mib)} node memory sizes for {n} NUMA nodes")
        if len(set(node_mem_mib)) != 1:
            raise UserError(f"NUMA nodes with unequal memory {node_mem_mib} MiB: numa=fake "
                            f"splits memory evenly; give every node the same size")
        if node_mem_mib[0] < FAKE_NODE_MIN_MIB:
            raise UserError(f"NUMA node memory {node_mem_mib[0]} MiB is below the kernel's "
                            f"{FAKE_NODE_MIN_MIB} MiB minimum for an emulated node; give the "
                            f"guest more memory per node (--set memory.size_per_node=...)")
    if n == 1:
        return []
    flat = ",".join(str(d) for row in distances for d in row)
    groups = ":".join(format_cpulist(c) for c in nodes)
    return [f"numa=fake={n}:{flat}", f"numa_emu_cpus={groups}"]


def parse_numa_boot_args(args: list[str]) -> NumaLayout | None:
    """The layout the kernel arguments describe (None without numa_emu_cpus); validates."""
    fake = emu = None
    for a in args:
        if a.startswith("numa=fake="):
            fake = a[len("numa=fake="):]
        elif a.startswith("numa_emu_cpus="):
            emu = a[len("numa_emu_cpus="):]
    if emu is None:
        return None
    if fake is None:
        raise UserError("numa_emu_cpus= needs numa=fake=N (the kernel ignores it otherwise)")
    count, _, dist_text = fake.partition(":")
    if not count.isdigit():
        raise UserError(f"numa=fake={fake}: expected a node count, e.g. numa=fake=2:10,20,20,10")
    n = int(count)
    nodes = [list(parse_cpulist(g)) for g in emu.split(":")]
    if len(nodes) != n:
        raise UserError(f"numa_emu_cpus names {len(nodes)} nodes but numa=fake makes {n}")
    if dist_text:
        try:
            flat = [int(x) for x in dist_text.split(",")]
        except ValueError:
            raise UserError(f"numa=fake distances {dist_text!r} are not integers") from None
        if len(flat) != n * n:
            raise UserError(f"numa=fake has {len(flat)} distances, {n} nodes need {n * n}")
        distances = [flat[i * n:(i + 1) * n] for i in range(n)]
    else:
        # numa_emulation() falls back to LOCAL_DISTANCE for nodes on one physical node.
        distances = [[LOCAL_DISTANCE] * n for _ in range(n)]
        if n > 1:
            raise UserError("numa=fake without distances makes all nodes equidistant, so the "
                            "scheduler builds no NUMA level; add the distance matrix")
    _check_layout(nodes, distances)
    return NumaLayout(tuple(tuple(c) for c in nodes), tuple(tuple(r) for r in distances))
