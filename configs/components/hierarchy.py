"""One parametric classic cache hierarchy for every sharing pattern of the catalogue.

gem5's stdlib has one class per topology (PrivateL1SharedL2, PrivateL1PrivateL2, ...). This
hierarchy instead builds whatever the plan says: one cache per (level, group of cores),
each outer cache behind a crossbar that its inner caches share. It therefore models

- L2 shared by groups of cores: Clovertown / Xeon E5440 (pairs), Niagara (one group of 8);
- private L2 + shared L3: Core i7 920 (one L3), Westmere (one L3 per socket);
- NUMA: Hector (L1 only, 16 modules, 4 stations) and Westmere (2 sockets), where every
  last-level requester reaches each memory bank over its own path whose latency is the
  catalogue's local / same-node / remote latency (Hector's ring delay included).

Classic caches (not Ruby): they write dirty lines back when gem5 drains for a checkpoint,
which Ruby's MESI protocols cannot do.

NUMA wiring, and why: a classic crossbar charges the same latency to every requester, so
per-requester latency needs per-requester paths. Each requester (the memory side of an LLC
instance, or of a core's L1s when there is no shared cache) gets a coherent "router"
crossbar, and the router one link per memory bank: a one-line cache (NumaLinkCache) whose
latency is the extra cycles of that bank's class (local, node, remote) over local. Each link
reaches the coherent crossbar in front of its bank, which is that bank's point of
coherence. For any one address the graph is a tree (one bank, one path per requester), so
snoops reach each cache once. The links are caches rather than crossbars because gem5 cannot
chain crossbars in timing mode (see NumaLinkCache). Addresses that are not memory (PIO, the
local APICs, the m5op page) leave the routers through their default port to a non-coherent
system bus that carries the X86Board's I/O bridges, interrupts and the functional system
port. Uncached device DMA enters that bus through a bridge limited to memory ranges (the
guest boots with pci=off and no disk, so none is expected).
"""

from m5.params import NULL
from m5.objects import (
    BadAddr,
    Bridge,
    L2XBar,
    NoncoherentXBar,
    SystemXBar,
)

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.cachehierarchies.classic.abstract_classic_cache_hierarchy import (
    AbstractClassicCacheHierarchy,
)
from gem5.components.cachehierarchies.classic.caches.mmu_cache import MMUCache
from gem5.utils.override import overrides

from .caches import NumaLinkCache, PlanCache

# Page-table walker caches, as in gem5's stdlib hierarchies (8 KiB each, per core, I and D):
# without them every x86 page walk would go to the next shared level uncached.
MMU_CACHE_BYTES = 8 << 10


def _mmu_cache() -> MMUCache:
    cache = MMUCache(size=f"{MMU_CACHE_BYTES}B", writeback_clean=False)
    # gem5's MMUCache comes with a stride prefetcher; no level of our model prefetches.
    cache.prefetcher = NULL
    return cache


def _plan_bus(plan) -> L2XBar:
    """The crossbar in front of a shared (or multi-ported) cache, timed by the plan."""
    from schedlab.backends.gem5 import plan as gp
    return L2XBar(width=gp.BUS_WIDTH_BYTES, frontend_latency=gp.BUS_FRONTEND_CYCLES,
                  forward_latency=gp.BUS_FORWARD_CYCLES, response_latency=gp.BUS_RESPONSE_CYCLES,
                  snoop_response_latency=gp.BUS_SNOOP_RESPONSE_CYCLES)


class PlanCacheHierarchy(AbstractClassicCacheHierarchy):
    """Classic caches wired exactly as the plan's sharing groups (and NUMA paths) say."""

    def __init__(self, plan):
        AbstractClassicCacheHierarchy.__init__(self)
        self._plan = plan
        self._numa = plan.memory.numa
        if self._numa:
            # The system bus only carries I/O, interrupts and functional accesses.
            self.membus = NoncoherentXBar(width=16, frontend_latency=2, forward_latency=1,
                                          response_latency=2, header_latency=1)
        else:
            self.membus = SystemXBar(width=64)
        self.membus.badaddr_responder = BadAddr()
        self.membus.default = self.membus.badaddr_responder.pio

    @overrides(AbstractClassicCacheHierarchy)
    def get_mem_side_port(self):
        return self.membus.mem_side_ports

    @overrides(AbstractClassicCacheHierarchy)
    def get_cpu_side_port(self):
        return self.membus.cpu_side_ports

    @overrides(AbstractCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        plan = self._plan
        board.connect_system_port(self.membus.cpu_side_ports)
        cores = board.get_processor().get_cores()

        # One cache object per plan instance, named as in the plan (l1d_0, l2_1, ...) so
        # the statistics say which instance they count; a crossbar in front of every outer
        # instance (bus_l2_1).
        by_name, bus_of = {}, {}
        for c in plan.caches:
            by_name[c.name] = PlanCache(c)
            setattr(self, c.name, by_name[c.name])
            if c.level > 1:
                bus_of[c.name] = _plan_bus(plan)
                setattr(self, f"bus_{c.name}", bus_of[c.name])
        outer = [c for c in plan.caches if c.level > 1]
        for c in outer:
            bus_of[c.name].mem_side_ports = by_name[c.name].cpu_side

        # Where the memory side of each top-level instance (and each core without shared
        # cache) goes: the system bus (uniform memory) or its NUMA router.
        top_port = self._memory_side(board, by_name)

        for c in plan.caches:
            if c.parent is not None:
                by_name[c.name].mem_side = bus_of[c.parent].cpu_side_ports
            else:
                by_name[c.name].mem_side = top_port(c.cores)

        self.iptw_caches = [_mmu_cache() for _ in cores]
        self.dptw_caches = [_mmu_cache() for _ in cores]
        for i, cpu in enumerate(cores):
            cpu.connect_icache(by_name[plan.l1_of(i, "instruction").name].cpu_side)
            cpu.connect_dcache(by_name[plan.l1_of(i, "data").name].cpu_side)
            cpu.connect_walker_ports(self.iptw_caches[i].cpu_side, self.dptw_caches[i].cpu_side)
            behind = plan.first_shared_level_below(i)
            for ptw in (self.iptw_caches[i], self.dptw_caches[i]):
                ptw.mem_side = (bus_of[behind.name].cpu_side_ports if behind is not None
                                else top_port((i,)))
            # x86 interrupts (local APIC messages) travel over the system bus.
            cpu.connect_interrupt(self.membus.mem_side_ports, self.membus.cpu_side_ports)

        if board.has_coherent_io():
            self._setup_io(board)
        self._size_snoop_filters(len(cores))

    def _size_snoop_filters(self, num_cores: int) -> None:
        """Let every snoop filter track all the blocks the caches can hold. gem5's default
        (8 MiB) is smaller than Westmere's two 12 MiB L3s or the E5440's two 6 MiB L2s,
        and a full snoop filter panics the simulation."""
        from m5.objects import CoherentXBar as Coherent
        mem = self._plan.memory
        total = (sum(c.size for c in self._plan.caches)
                 + 2 * num_cores * MMU_CACHE_BYTES
                 + len(mem.requesters) * len(mem.banks) * self._plan.line)
        capacity = max(8 << 20, 1 << (total - 1).bit_length())
        for xbar in self.descendants():
            if isinstance(xbar, Coherent) and xbar.snoop_filter is not NULL:
                xbar.snoop_filter.max_capacity = f"{capacity}B"

    # ---------------------------------------------------------------- memory side
    def _memory_side(self, board, by_name):
        """Return f(cores) -> the port the top of those cores' hierarchy connects to."""
        plan = self._plan
        if not self._numa:
            for _, port in board.get_memory().get_mem_ports():
                self.membus.mem_side_ports = port
            return lambda cores: self.membus.cpu_side_ports

        mem = plan.memory
        # The point of coherence of each bank: a system crossbar in front of it.
        bank_buses = [SystemXBar(width=64) for _ in mem.banks]
        for i, bus in enumerate(bank_buses):
            setattr(self, f"bank_bus_{i}", bus)
        for bus, port in zip(bank_buses, board.get_memory().bank_ports()):
            bus.mem_side_ports = port
            # Functional accesses (kernel loading) and DMA reach memory via the system bus.
            self.membus.mem_side_ports = bus.cpu_side_ports

        router_of = {}
        for r in mem.requesters:
            router = _plan_bus(plan)
            setattr(self, r.name, router)
            # Anything that is not memory (PIO, APICs, m5ops) goes to the system bus.
            router.default = self.membus.cpu_side_ports
            router.use_default_range = False
            for i, bank in enumerate(mem.banks):
                link = NumaLinkCache(extra_cycles=r.bank_latency_cycles[i] - mem.local_cycles,
                                     line_bytes=plan.line, bank_start=bank.start,
                                     bank_size=bank.size)
                # Named per path (r.link(i)): the statistics count each path's traffic.
                setattr(self, r.link(i), link)
                link.cpu_side = router.mem_side_ports
                link.mem_side = bank_buses[i].cpu_side_ports
            for core in r.cores:
                router_of[core] = router
        return lambda cores: router_of[cores[0]].cpu_side_ports

    def _setup_io(self, board) -> None:
        if self._numa:
            # Device DMA (none expected: pci=off, no disk) reaches memory uncached.
            self.dma_bridge = Bridge(delay="50ns", ranges=board.mem_ranges[:1])
            self.dma_bridge.cpu_side_port = board.get_mem_side_coherent_io_port()
            self.dma_bridge.mem_side_port = self.membus.cpu_side_ports
            return
        # As gem5's stdlib: a small I/O cache keeps device DMA coherent with the CPUs.
        from m5.objects import Cache
        self.iocache = Cache(assoc=8, tag_latency=50, data_latency=50, response_latency=50,
                             mshrs=20, size="1KiB", tgts_per_mshr=12,
                             addr_ranges=board.mem_ranges)
        self.iocache.mem_side = self.membus.cpu_side_ports
        self.iocache.cpu_side = board.get_mem_side_coherent_io_port()
