"""The gem5 board plan: everything the gem5 configs build, derived from a resolved machine.

A :class:`BoardPlan` is pure data computed from ``MachineSpec.to_dict()`` (the resolved
machine as JSON): which cores share which cache instance, every cache's size, associativity
and latencies in gem5 units (cycles of the core clock), the per-core CPUID values that make
a Linux guest see the catalogue's last-level-cache groups, the memory size (capped at the
X86Board's 3 GiB with a note), the memory banks and, on NUMA machines (Hector, Westmere),
the latency of every (requester, bank) pair with Hector's ring delay included, and the O3
core parameters.

This module uses only the standard library and never imports gem5 or the rest of schedlab,
so the same code runs on the host (tests, ``run.py boot``) and inside gem5's embedded
Python (configs/components read ``machine.json`` and call :func:`plan_from_dict`). Nothing
here re-derives what the catalogue knows: sizes, latencies and sharing come from the dict.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

# The X86Board maps all memory below the 3 GiB I/O hole (gem5 v24 x86_board.py raises
# an exception for more); machines with more memory are capped and say so.
X86_BOARD_MAX_MEMORY = 3 << 30
# Smaller NUMA nodes are raised to this (Hector's 16 MiB stations); only the size changes,
# sharing and latencies stay as catalogued. The guest's numa=fake=N splits memory in 32 MiB
# steps and charges the firmware's hole below 1 MiB to node 0: with 64 MiB nodes it made
# node 0 = 0-64 MiB plus the top 32 MiB and left node 3 with 32 MiB. Nodes of at least
# 96 MiB, in whole 32 MiB steps, come out exactly as the banks (the last node then extends
# to the end of memory), and hold the guest (kernel plus a 5 MiB initramfs) comfortably.
GUEST_MIN_NODE_MEMORY = 96 << 20
# The kernel's FAKE_NODE_MIN_SIZE, numa=fake's step (kernel_params.FAKE_NODE_MIN_MIB; this
# module imports nothing of schedlab, so a test keeps the two equal).
NUMA_FAKE_STEP = 32 << 20

# CPUID values measured to work with gem5 v24.0 X86 and Linux 6.1 (configs/README.md,
# "Topology seen by the guest"):
# leaf 1 EAX = family/model/stepping, EBX = APIC id << 24 | CLFLUSH line (8 x 8 B) | brand,
# ECX/EDX = feature flags. gem5 reports vendor HygonGenuine; on that path Linux derives the
# package and the LLC id from the initial APIC id and the core-id bits of 0x80000008 ECX.
CPUID1_EAX = 0x00020F51
CPUID1_EBX_LOW = 0x00000805
CPUID1_ECX = 0xEFDBFBFF
CPUID1_EDX = 0x00000209
# CPUID 0x80000008 EAX: 48-bit virtual, 48-bit physical addresses (gem5's default).
CPUID_80000008_EAX = 0x00003030

# Cache parameters the catalogue does not describe. Values are gem5 stdlib's classic
# defaults (components/cachehierarchies/classic/caches/): L1 16 MSHRs x 20 targets,
# outer levels 20 x 12, a 1-cycle response path; no prefetcher (the catalogue notes that
# the real parts' prefetchers are not modelled).
L1_MSHRS, L1_TARGETS = 16, 20
OUTER_MSHRS, OUTER_TARGETS = 20, 12
RESPONSE_LATENCY_CYCLES = 1

# O3 structure sizes the catalogue lacks, derived from pipeline.width and rob_entries with
# Core 2 / Nehalem proportions (Core 2: ROB 96, 32 reservation stations, 32 load / 20 store
# buffers; Nehalem: ROB 128, 36 RS, 48 / 32): IQ = LQ = ROB / 3, SQ = ROB / 4. Physical
# register files keep gem5's default of 256 each. Without rob_entries: 32 per issue slot.
O3_DEFAULT_ROB_PER_WIDTH = 32
O3_PHYS_REGS = 256
O3_MAX_FETCH_BUFFER = 64

CPU_TYPES = ("atomic", "timing", "o3")


class PlanError(ValueError):
    """The machine cannot be turned into a gem5 board (the message says why and what to do)."""


@dataclass(frozen=True)
class CachePlan:
    """One cache instance: a level of the catalogue restricted to one group of cores."""

    name: str            # gem5 object name, e.g. "l2_1" (the catalogue's cache name + group)
    cache: str           # the catalogue's cache name ("l1d", "l2", ...)
    level: int
    kind: str            # instruction | data | unified
    cores: tuple[int, ...]
    size: int            # bytes
    assoc: int
    line: int            # the catalogue's line size (gem5 uses BoardPlan.line for all)
    sets: int
    latency_cycles: int  # the catalogue's hit latency; gem5 tag = data latency = this
    tag_latency: int
    data_latency: int
    response_latency: int
    mshrs: int
    tgts_per_mshr: int
    parent: str | None   # the next cache instance towards memory; None = the memory side
    node: int | None     # the NUMA node of all its cores, or None if they span nodes

    @property
    def shared(self) -> bool:
        return len(self.cores) > 1


@dataclass(frozen=True)
class CorePlan:
    """One core: its CPUID APIC id, the caches it sees and its CPUID values (X86ISA
    parameters). gem5's local APIC of core i always has id i (its context id); ``apic_id``
    is the initial APIC id CPUID reports, from which Linux derives package and LLC."""

    index: int
    apic_id: int
    llc_group: int
    package: int
    node: int
    caches: tuple[str, ...]                 # cache instance names, L1 first
    cpuid_family_model_stepping: tuple[int, int, int, int]   # X86ISA.FamilyModelStepping
    cpuid_long_mode_address_size: tuple[int, int, int, int]  # X86ISA.LongModeAddressSize

    @property
    def guest_physical_id(self) -> int:
        """What the Linux guest will derive as physical id (= LLC id on gem5's Hygon path)."""
        bits = (self.cpuid_long_mode_address_size[3] >> 12) & 0xF
        return self.apic_id >> bits


@dataclass(frozen=True)
class BankPlan:
    """One memory controller: a contiguous physical range owned by one package or node."""

    index: int
    node: int
    packages: tuple[int, ...]
    start: int
    size: int


@dataclass(frozen=True)
class RequesterPlan:
    """Where memory requests leave the caches (an LLC instance, or a core without shared
    cache) and the latency, in core cycles, of each bank seen from there."""

    name: str                      # "req_<llc instance>"
    source: str                    # the LLC instance whose memory side feeds it
    cores: tuple[int, ...]
    node: int
    bank_latency_cycles: tuple[int, ...]   # indexed by bank
    bank_class: tuple[str, ...]            # local | node | remote, indexed by bank

    def link(self, bank: int) -> str:
        """The name of the hierarchy's link from here to ``bank`` (its statistics' prefix
        under board.cache_hierarchy)."""
        return f"{self.name}_bank{bank}"


@dataclass(frozen=True)
class MemoryPlan:
    requested: int                 # what the catalogue asks for (bytes)
    size: int                      # what gem5 gets (bytes, <= 3 GiB)
    capped: bool
    note: str
    numa: bool
    banks: tuple[BankPlan, ...]
    local_cycles: int
    node_cycles: int | None
    remote_cycles: int | None      # ring delay included
    delay_cycles: int
    device_latency_ns: float       # the banks' own latency: local, minus a NUMA path's cycles
    jitter_ns: float               # a random extra latency per access, uniform in [0, it]
    path_cycles: int               # NUMA: what the path to a bank charges (numa_path_cycles)
    requesters: tuple[RequesterPlan, ...]   # empty unless numa

    def node_ranges(self) -> list[tuple[int, int, int]]:
        """(node, start, size) per NUMA node: what a kernel-side topology parameter needs."""
        out: dict[int, list[int]] = {}
        for b in self.banks:
            lo, hi = out.get(b.node, [b.start, b.start])
            out[b.node] = [min(lo, b.start), max(hi, b.start + b.size)]
        return [(n, lo, hi - lo) for n, (lo, hi) in sorted(out.items())]


@dataclass(frozen=True)
class O3Plan:
    width: int
    rob_entries: int
    iq_entries: int
    lq_entries: int
    sq_entries: int
    phys_int_regs: int
    phys_float_regs: int
    fetch_buffer_size: int
    derived: tuple[str, ...]       # which values were derived rather than catalogued

    def params(self) -> dict:
        """gem5 X86O3CPU parameter names -> values."""
        w = self.width
        return {
            "fetchWidth": w, "decodeWidth": w, "renameWidth": w, "dispatchWidth": w,
            "issueWidth": w, "wbWidth": w, "commitWidth": w, "squashWidth": w,
            "numROBEntries": self.rob_entries, "numIQEntries": self.iq_entries,
            "LQEntries": self.lq_entries, "SQEntries": self.sq_entries,
            "numPhysIntRegs": self.phys_int_regs, "numPhysFloatRegs": self.phys_float_regs,
            "fetchBufferSize": self.fetch_buffer_size,
        }


@dataclass(frozen=True)
class XBarPlan:
    """One gem5 crossbar's width and timing. Latencies are cycles of the board clock (the
    core clock); a request pays frontend + forward, a response the response latency, and
    each packet holds a layer for header_latency + size / width cycles."""

    width: int                           # bytes per cycle and port
    frontend_latency: int
    forward_latency: int
    response_latency: int
    header_latency: int
    snoop_response_latency: int | None   # None: a non-coherent crossbar

    @property
    def coherent(self) -> bool:
        return self.snoop_response_latency is not None


@dataclass(frozen=True)
class IOCachePlan:
    """The small cache through which device DMA reaches a uniform machine's memory bus
    coherently (as in gem5's stdlib classic hierarchies). Latencies in cycles."""

    size: int                      # bytes
    assoc: int
    tag_latency: int
    data_latency: int
    response_latency: int
    mshrs: int
    tgts_per_mshr: int


@dataclass(frozen=True)
class NumaLinkPlan:
    """What every NUMA link (a one-line cache between a requester's router and one bank's
    crossbar, configs/README.md) has besides its extra latency: enough MSHRs and write
    buffers never to limit what the requester above it has in flight, and no response
    latency of its own (the extra cycles are charged on the way to the bank)."""

    mshrs: int
    tgts_per_mshr: int
    write_buffers: int
    response_latency: int


@dataclass(frozen=True)
class InterconnectPlan:
    """The parts of the cache hierarchy that the catalogue does not describe: crossbars,
    page-walk caches, the I/O path, NUMA links and snoop filters. The values, and where
    they come from, are the constants that follow (CACHE_BUS, SYSTEM_BUS, ...)."""

    cache_bus: XBarPlan            # in front of every outer cache instance; NUMA routers
    system_bus: XBarPlan           # uniform: the coherent memory bus; NUMA: the
                                   # non-coherent bus of I/O, interrupts and functional accesses
    bank_bus: XBarPlan | None      # NUMA: the coherent crossbar in front of each bank
    page_walk_cache_size: int      # bytes; one I and one D page-walk cache per core
    io_cache: IOCachePlan | None   # uniform: keeps device DMA coherent
    dma_bridge_latency_ns: float | None   # NUMA: device DMA reaches memory uncached
    numa_link: NumaLinkPlan | None
    snoop_filter_capacity: int     # bytes: every block the caches can hold


# The interconnect's values (InterconnectPlan). The catalogue describes none of these parts;
# the values are gem5 v24 stdlib's for its classic hierarchies, written down here so that
# configs/components type no number of their own.
# In front of every outer cache instance and as each NUMA requester's router: gem5's
# L2XBar timing, 32 B wide.
CACHE_BUS = XBarPlan(width=32, frontend_latency=1, forward_latency=0, response_latency=1,
                     header_latency=1, snoop_response_latency=1)
# A uniform machine's memory bus, and the crossbar in front of each NUMA bank: gem5's
# SystemXBar timing, 64 B wide as the stdlib's classic hierarchies make it.
SYSTEM_BUS = XBarPlan(width=64, frontend_latency=3, forward_latency=4, response_latency=2,
                      header_latency=1, snoop_response_latency=4)
# A NUMA machine's system bus carries only I/O, interrupts and functional accesses (memory
# traffic takes the per-requester paths): non-coherent, gem5's IOXBar timing.
IO_BUS = XBarPlan(width=16, frontend_latency=2, forward_latency=1, response_latency=2,
                  header_latency=1, snoop_response_latency=None)
# Page-walk caches, one for instruction and one for data walks per core, behind the L1s:
# without them every x86 page walk would go to the next shared level uncached.
PAGE_WALK_CACHE_BYTES = 8 << 10
# The I/O cache of gem5's stdlib classic hierarchies.
IO_CACHE = IOCachePlan(size=1 << 10, assoc=8, tag_latency=50, data_latency=50,
                       response_latency=50, mshrs=20, tgts_per_mshr=12)
# On NUMA machines device DMA (none expected: pci=off, no disk) crosses a bridge instead.
DMA_BRIDGE_LATENCY_NS = 50.0
# A NUMA link must never be what limits the requests in flight: more MSHRs and write
# buffers than any requester above it has (an LLC: 20 MSHRs + 8 write buffers; a core's two
# L1s: 2 x 16 MSHRs).
NUMA_LINK = NumaLinkPlan(mshrs=64, tgts_per_mshr=16, write_buffers=64, response_latency=0)
# gem5's snoop filters track 8 MiB by default, less than Westmere's two 12 MiB L3s or the
# E5440's two 6 MiB L2s, and a full snoop filter panics the simulation: every filter gets
# at least this, and more (a power of two) where the caches hold more.
SNOOP_FILTER_MIN_BYTES = 8 << 20


@dataclass(frozen=True)
class BoardPlan:
    """The whole gem5 model of one resolved machine."""

    machine: str
    clock_hz: int
    cores: tuple[CorePlan, ...]
    caches: tuple[CachePlan, ...]
    line: int                      # gem5's single system cache-line size
    memory: MemoryPlan
    o3: O3Plan
    default_cpu: str               # o3 for out-of-order machines, timing for in-order
    llc: str                       # the catalogue name of the last-level cache
    llc_groups: tuple[tuple[int, ...], ...]
    apic_ids_match_firmware: bool  # CPUID APIC ids = gem5's local APIC ids (= core index)
    interconnect: InterconnectPlan
    notes: tuple[str, ...] = field(default=())

    # ---- queries used by configs and tests
    @property
    def clock(self) -> str:
        """The clock in gem5's notation."""
        return f"{self.clock_hz}Hz"

    @property
    def num_cores(self) -> int:
        return len(self.cores)

    def cache(self, name: str) -> CachePlan:
        for c in self.caches:
            if c.name == name:
                return c
        raise KeyError(name)

    def instances(self, cache: str) -> list[CachePlan]:
        """Every instance of a catalogue cache, in core order."""
        return [c for c in self.caches if c.cache == cache]

    def children(self, name: str | None) -> list[CachePlan]:
        """Instances whose memory side connects to ``name`` (None: to the memory side)."""
        return [c for c in self.caches if c.parent == name]

    def l1_of(self, core: int, kind: str) -> CachePlan:
        """The level-1 instance serving ``core`` for kind instruction or data."""
        return l1_of(self.caches, core, kind)

    def first_shared_level_below(self, core: int) -> CachePlan | None:
        """The instance behind the core's L1s (where its page-walk caches attach), if any."""
        l1 = self.l1_of(core, "data")
        return self.cache(l1.parent) if l1.parent else None

    def has_one_shared_l2(self) -> bool:
        """Private L1s and one L2 shared by all cores: the machines gem5's stock
        PrivateL1SharedL2CacheHierarchy can model too (the overhead benchmark)."""
        l2 = self.instances("l2")
        return (sorted({c.cache for c in self.caches}) == ["l1d", "l1i", "l2"]
                and len(l2) == 1 and len(l2[0].cores) == self.num_cores)

    def sharing(self) -> dict[str, list[list[int]]]:
        """catalogue cache name -> groups of cores sharing each instance."""
        out: dict[str, list[list[int]]] = {}
        for c in self.caches:
            out.setdefault(c.cache, []).append(list(c.cores))
        return out

    def guest_packages(self) -> list[list[int]]:
        """The core groups a Linux guest will report as packages / LLC groups from CPUID."""
        groups: dict[int, list[int]] = {}
        for core in self.cores:
            groups.setdefault(core.guest_physical_id, []).append(core.index)
        return [groups[k] for k in sorted(groups)]

    def boot_identity(self) -> dict:
        """What of the board a boot checkpoint depends on: the cores (count, CPUID), the
        clock (the guest calibrates its timers against it) and the memory map. Caches,
        their latencies and the O3 sizes are not in it: Atomic boot cores take no
        latency from the caches, and a checkpoint holds no cache contents, so machines
        that differ only there (``--set l2.size=8MiB``) share one checkpoint."""
        return {"clock_hz": self.clock_hz,
                "cores": [[c.apic_id, list(c.cpuid_family_model_stepping),
                           list(c.cpuid_long_mode_address_size)] for c in self.cores],
                "memory": [self.memory.size,
                           [[b.start, b.size, b.node] for b in self.memory.banks]]}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["clock"] = self.clock
        d["guest_packages"] = self.guest_packages()
        d["memory"]["node_ranges"] = self.memory.node_ranges()
        d["o3"]["params"] = self.o3.params()
        return d

    def describe(self) -> str:
        """A short human-readable summary (printed by ``run.py boot``)."""
        lines = [f"{self.machine}: {self.num_cores} cores at {self.clock_hz / 1e9:g} GHz, "
                 f"{self.memory.size >> 20} MiB memory, {self.line} B lines"]
        for cache, groups in self.sharing().items():
            c = self.instances(cache)[0]
            lines.append(f"  {cache}: {c.size >> 10} KiB {c.assoc}-way {c.latency_cycles} cycles, "
                         f"instances {groups}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def l1_of(caches: tuple[CachePlan, ...] | list[CachePlan], core: int, kind: str) -> CachePlan:
    """The level-1 instance of ``caches`` serving ``core`` for kind instruction or data."""
    for c in caches:
        if c.level == 1 and core in c.cores and c.kind in (kind, "unified"):
            return c
    raise KeyError((core, kind))


# --------------------------------------------------------------------------- derivation

def _cpuid_for(apic_id: int, cores_per_llc: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    bits = max(0, math.ceil(math.log2(cores_per_llc))) if cores_per_llc > 1 else 0
    fms = (CPUID1_EAX, (apic_id << 24) | CPUID1_EBX_LOW, CPUID1_ECX, CPUID1_EDX)
    lmas = (CPUID_80000008_EAX, 0, 0, (bits << 12) | (cores_per_llc - 1))
    return fms, lmas


def _node_of(machine: dict, core: int) -> int:
    return next(i for i, n in enumerate(machine["nodes"]) if core in n)


def _package_of(machine: dict, core: int) -> int:
    return next(i for i, p in enumerate(machine["packages"]) if core in p)


def _cache_instances(machine: dict) -> list[CachePlan]:
    caches = sorted(machine["caches"], key=lambda c: (c["level"], c["name"]))
    max_level = max(c["level"] for c in caches)
    out: list[CachePlan] = []
    for c in caches:
        parent_level = next((lv for lv in range(c["level"] + 1, max_level + 1)
                             if any(x["level"] == lv for x in caches)), None)
        for gi, group in enumerate(c["groups"]):
            group = tuple(group)
            parent = None
            if parent_level is not None:
                for p in caches:
                    if p["level"] != parent_level:
                        continue
                    for pi, pg in enumerate(p["groups"]):
                        if set(group) <= set(pg):
                            parent = f"{p['name']}_{pi}"
                if parent is None:
                    raise PlanError(f"{machine['name']}: no level-{parent_level} cache covers "
                                    f"cores {list(group)} of {c['name']}")
            nodes = {_node_of(machine, x) for x in group}
            lat = int(c["latency_cycles"])
            l1 = c["level"] == 1
            out.append(CachePlan(
                name=f"{c['name']}_{gi}", cache=c["name"], level=c["level"], kind=c["kind"],
                cores=group, size=int(c["size"]), assoc=int(c["assoc"]), line=int(c["line"]),
                sets=int(c["sets"]), latency_cycles=lat, tag_latency=lat, data_latency=lat,
                response_latency=RESPONSE_LATENCY_CYCLES,
                mshrs=L1_MSHRS if l1 else OUTER_MSHRS,
                tgts_per_mshr=L1_TARGETS if l1 else OUTER_TARGETS,
                parent=parent, node=nodes.pop() if len(nodes) == 1 else None))
    return out


def _llc_entry(machine: dict) -> dict:
    """The last-level cache, as MachineSpec.llc (the one rule) named it."""
    return next(c for c in machine["caches"] if c["name"] == machine["llc"])


def numa_path_cycles(llc: CachePlan) -> int:
    """The cycles gem5 charges an LLC miss on a NUMA machine besides the bank's latency:
    the LLC's lookup and fill, the requester's router (request and response, each with its
    header), the link's response and the bank's crossbar (likewise). With Hector's 1-cycle
    L1 that is 13 cycles, which bench/bench_hector_latency.py measured (32.06 cycles for a
    local line with the bank at the full 19)."""
    router, bank = CACHE_BUS, SYSTEM_BUS
    return (llc.tag_latency + llc.response_latency
            + router.frontend_latency + router.response_latency + 2 * router.header_latency
            + NUMA_LINK.response_latency
            + bank.frontend_latency + bank.response_latency + 2 * bank.header_latency)


def _memory_plan(machine: dict, llc_instances: list[CachePlan], notes: list[str]) -> MemoryPlan:
    mem = machine["memory"]
    nodes = machine["nodes"]
    packages = machine["packages"]
    requested = int(mem["size"])
    size, capped, note = requested, False, ""
    per_node = int(mem["size_per_node"])
    if requested > X86_BOARD_MAX_MEMORY:
        # Keep every node the same size, on a 64 MiB boundary (what numa=fake and the
        # kernel's memblock alignment handle without surprises).
        per_node = (X86_BOARD_MAX_MEMORY // len(nodes)) // (64 << 20) * (64 << 20)
        size, capped = per_node * len(nodes), True
        note = (f"memory capped at {size >> 20} MiB ({per_node >> 20} MiB per node): gem5's "
                f"X86Board maps at most 3 GiB below the I/O hole; the catalogue asks for "
                f"{requested >> 20} MiB")
        notes.append(note)
    elif per_node < GUEST_MIN_NODE_MEMORY:
        per_node = GUEST_MIN_NODE_MEMORY
        size = per_node * len(nodes)
        note = (f"memory raised to {size >> 20} MiB ({per_node >> 20} MiB per node): the "
                f"catalogue's {requested >> 20} MiB cannot hold the Linux guest; sharing and "
                f"latencies are as catalogued")
        notes.append(note)
    if len(nodes) > 1 and per_node % NUMA_FAKE_STEP:
        raise PlanError(
            f"{machine['name']}: NUMA node memory of {per_node / (1 << 20):g} MiB is not a "
            f"whole number of {NUMA_FAKE_STEP >> 20} MiB steps, so the guest's numa=fake "
            f"split would not fall on the banks; use a multiple of {NUMA_FAKE_STEP >> 20} MiB "
            f"(--set memory.size_per_node=...)")
    local = int(mem["local_cycles"])
    node_c = mem.get("node_cycles")
    remote = mem.get("remote_cycles")
    numa = len(nodes) > 1
    clock = int(machine["clock_hz"])
    # A NUMA machine's latencies are cache-line load times (Hector's table): what a
    # last-level miss costs from the miss to the fill. The path to a bank charges cycles of
    # its own, so the bank answers after the local latency minus those.
    path = numa_path_cycles(llc_instances[0]) if numa else 0
    if local <= path:
        raise PlanError(f"{machine['name']}: a local memory latency of {local} cycles is no "
                        f"more than the {path} cycles the path from the last-level cache to a "
                        f"bank charges by itself; give a longer memory.latency.local")
    device_ns = (local - path) / clock * 1e9

    # Banks: per package where the catalogue distinguishes own-package from same-node memory
    # (Hector's processor modules), else per node. Uniform machines get one bank.
    per_package = numa and node_c is not None and any(
        sum(1 for p in packages if set(p) <= set(n)) > 1 for n in nodes)
    banks: list[BankPlan] = []
    start = 0
    if not numa:
        banks.append(BankPlan(0, 0, tuple(range(len(packages))), 0, size))
    else:
        for ni, n in enumerate(nodes):
            pkgs = [pi for pi, p in enumerate(packages) if set(p) <= set(n)]
            if per_package:
                bank_size = per_node // len(pkgs)
                for pi in pkgs:
                    banks.append(BankPlan(len(banks), ni, (pi,), start, bank_size))
                    start += bank_size
            else:
                banks.append(BankPlan(len(banks), ni, tuple(pkgs), start, per_node))
                start += per_node

    requesters: list[RequesterPlan] = []
    if numa:
        for inst in llc_instances:
            if inst.node is None:
                raise PlanError(
                    f"{machine['name']}: last-level cache {inst.name} is shared by cores "
                    f"{list(inst.cores)} of several NUMA nodes; a NUMA model needs every "
                    f"last-level cache inside one node")
            req_pkgs = {_package_of(machine, c) for c in inst.cores}
            lats, classes = [], []
            for b in banks:
                if set(b.packages) & req_pkgs:
                    cls, lat = "local", local
                elif b.node == inst.node:
                    cls, lat = "node", (node_c if node_c is not None else local)
                else:
                    cls, lat = "remote", remote
                lats.append(int(lat))
                classes.append(cls)
            requesters.append(RequesterPlan(f"req_{inst.name}", inst.name, inst.cores,
                                            inst.node, tuple(lats), tuple(classes)))
    return MemoryPlan(requested=requested, size=size, capped=capped, note=note, numa=numa,
                      banks=tuple(banks), local_cycles=local,
                      node_cycles=None if node_c is None else int(node_c),
                      remote_cycles=None if remote is None else int(remote),
                      delay_cycles=int(mem.get("delay_cycles", 0)),
                      device_latency_ns=device_ns, jitter_ns=float(mem.get("jitter_ns", 0.0)),
                      path_cycles=path,
                      requesters=tuple(requesters))


def _interconnect_plan(caches: list[CachePlan], memory: MemoryPlan, line: int,
                       num_cores: int) -> InterconnectPlan:
    numa = memory.numa
    # Snoop filters cover every block a cache can hold: the catalogue's caches, the
    # page-walk caches and the NUMA links (one line each).
    held = (sum(c.size for c in caches) + 2 * num_cores * PAGE_WALK_CACHE_BYTES
            + len(memory.requesters) * len(memory.banks) * line)
    return InterconnectPlan(
        cache_bus=CACHE_BUS, system_bus=IO_BUS if numa else SYSTEM_BUS,
        bank_bus=SYSTEM_BUS if numa else None, page_walk_cache_size=PAGE_WALK_CACHE_BYTES,
        io_cache=None if numa else IO_CACHE,
        dma_bridge_latency_ns=DMA_BRIDGE_LATENCY_NS if numa else None,
        numa_link=NUMA_LINK if numa else None,
        snoop_filter_capacity=max(SNOOP_FILTER_MIN_BYTES, 1 << (held - 1).bit_length()))


def _o3_plan(machine: dict) -> O3Plan:
    pipe = machine["pipeline"]
    width = int(pipe["width"])
    derived = ["iq_entries", "lq_entries", "sq_entries", "phys_int_regs", "phys_float_regs"]
    rob = pipe.get("rob_entries")
    if rob is None:
        rob = O3_DEFAULT_ROB_PER_WIDTH * width
        derived.insert(0, "rob_entries")
    rob = int(rob)
    line = _system_line(machine)
    return O3Plan(width=width, rob_entries=rob, iq_entries=max(8, rob // 3),
                  lq_entries=max(8, rob // 3), sq_entries=max(8, rob // 4),
                  phys_int_regs=O3_PHYS_REGS, phys_float_regs=O3_PHYS_REGS,
                  fetch_buffer_size=min(O3_MAX_FETCH_BUFFER, line), derived=tuple(derived))


def _system_line(machine: dict) -> int:
    # gem5 has one cache_line_size per system: use the last-level cache's (the unit of
    # memory traffic, which the L2/L3 miss rates of the studies count).
    return int(_llc_entry(machine)["line"])


def plan_from_dict(machine: dict) -> BoardPlan:
    """Derive the board plan from ``MachineSpec.to_dict()`` (or its JSON round trip)."""
    name = machine["name"]
    n = int(machine["cores"])
    notes: list[str] = []
    caches = _cache_instances(machine)
    line = _system_line(machine)
    other_lines = sorted({c.line for c in caches if c.line != line})
    if other_lines:
        notes.append(f"gem5 uses one cache-line size per system: {line} B at every level "
                     f"(the catalogue also has {', '.join(f'{x} B' for x in other_lines)}); "
                     f"caches keep their size and associativity, so their set counts change")
    llc = _llc_entry(machine)
    llc_groups = tuple(tuple(g) for g in llc["groups"])
    llc_instances = [c for c in caches if c.cache == llc["name"]]

    # CPUID: Linux takes the LLC group (and package) of a core as initial APIC id >> bits,
    # bits = the core-id width of 0x80000008 ECX. Real parts leave gaps in the APIC ids
    # when a group is not a power of two (Westmere's 6 cores use ids 0-5 and 8-13 of each
    # 8-id block); so do we: APIC id = group << bits | position in the group. gem5's local
    # APICs keep ids 0..n-1 (their context ids), so where the two differ the guest logs an
    # "APIC id mismatch" firmware warning per core and is otherwise unaffected: interrupts
    # are addressed by the firmware's ids, topology by CPUID's.
    per_llc = max(len(g) for g in llc_groups)
    bits = math.ceil(math.log2(per_llc)) if per_llc > 1 else 0
    cores = []
    for i in range(n):
        group = next(gi for gi, g in enumerate(llc_groups) if i in g)
        apic_id = group << bits | llc_groups[group].index(i)
        fms, lmas = _cpuid_for(apic_id, per_llc)
        mine = tuple(c.name for c in caches if i in c.cores)
        cores.append(CorePlan(index=i, apic_id=apic_id, llc_group=group,
                              package=_package_of(machine, i), node=_node_of(machine, i),
                              caches=mine, cpuid_family_model_stepping=fms,
                              cpuid_long_mode_address_size=lmas))
    apic_ids_match = all(c.apic_id == c.index for c in cores)
    if not apic_ids_match:
        notes.append(f"CPUID APIC ids {[c.apic_id for c in cores]} leave gaps so that Linux "
                     f"sees LLC groups {[list(g) for g in llc_groups]}; gem5's local APICs "
                     f"are numbered 0..{n - 1}, so the guest logs a harmless 'APIC id "
                     f"mismatch' warning for the cores where the two differ")

    memory = _memory_plan(machine, llc_instances, notes)
    kind = machine["pipeline"]["kind"]
    if kind == "in-order" and int(machine["pipeline"]["width"]) > 1:
        notes.append("in-order cores are modelled by TimingSimpleCPU, which issues one "
                     "instruction at a time (MinorCPU panics on X86 full system in gem5 v24)")
    return BoardPlan(machine=name, clock_hz=int(machine["clock_hz"]), cores=tuple(cores),
                     caches=tuple(caches), line=line, memory=memory, o3=_o3_plan(machine),
                     default_cpu="o3" if kind == "out-of-order" else "timing",
                     llc=llc["name"], llc_groups=llc_groups,
                     apic_ids_match_firmware=apic_ids_match,
                     interconnect=_interconnect_plan(caches, memory, line, n),
                     notes=tuple(notes))


def boot_args(plan: BoardPlan, extra: list[str] | tuple[str, ...] = (),
              tick_hz: int = 1000) -> list[str]:
    """Kernel command line for gem5: serial console, no ACPI/PCI probing (gem5 panics on
    config-space writes to devices it does not model), the runner's backend flag, lpj so
    the kernel skips delay-loop calibration (loops per jiffy = clock / the kernel's HZ,
    ``tick_hz``), the TSC as the guest's clock, and the periodic tick.

    gem5's TSC is the core's cycle count on the board's one clock, so every core's TSC runs
    at a constant rate and in step. Linux cannot know it: gem5's CPUID names a non-Intel
    vendor without the invariant-TSC bit, which Linux takes for unsynchronized TSCs, and it
    falls back to the jiffies clocksource (a 1 ms clock). ``tsc=reliable`` says otherwise
    (and skips the TSC warp test at CPU bring-up). ``tsc_early_khz`` gives the TSC's rate:
    measured against gem5's PIT it came out up to 0.13 % off (2666.6 MHz for 2.67 GHz), and
    with no HPET or ACPI PM timer Linux never refines it.

    ``nohz=off`` keeps every CPU on the periodic tick, as the jiffies clocksource did. gem5
    can lose an idle CPU's wake-up: a write to the MONITORed line between Linux's last
    need_resched() check and MWAIT does not end the MWAIT, and an interrupt posted while a
    HLT is in the pipeline does not end the HLT (configs/README.md). With the tick such a CPU
    wakes at the next jiffy; tickless, it may sleep until its next timer, which is how
    Hector's first tickless boot stalled for good in a cross-CPU TLB flush."""
    khz = plan.clock_hz // 1000
    return ["console=ttyS0", "acpi=off", "pci=off", "tsc=reliable", f"tsc_early_khz={khz}",
            "nohz=off", "schedlab.backend=gem5", f"lpj={plan.clock_hz // tick_hz}", *extra]
