"""One parametric classic cache hierarchy for every sharing pattern of the catalogue.

gem5's stdlib has one class per topology (PrivateL1SharedL2, PrivateL1PrivateL2, ...). This
hierarchy instead builds whatever its cache instances say: one cache per (level, group of
cores), each outer cache behind a crossbar that its inner caches share. It therefore models

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

from typing import Callable, Dict, Optional, Sequence, Tuple

from m5.objects import (
    BadAddr,
    BaseXBar,
    Bridge,
    CoherentXBar,
    L2XBar,
    NoncoherentXBar,
    Port,
    SystemXBar,
)
from m5.params import NULL

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.cachehierarchies.classic.abstract_classic_cache_hierarchy import (
    AbstractClassicCacheHierarchy,
)
from gem5.components.cachehierarchies.classic.caches.mmu_cache import MMUCache
from gem5.utils.override import overrides

from schedlab.backends.gem5.plan import (
    BankPlan,
    CachePlan,
    IOCachePlan,
    NumaLinkPlan,
    RequesterPlan,
    XBarPlan,
    l1_of,
)

from .caches import IOCache, NumaLinkCache, PlanCache


def crossbar(cls: type, timing: XBarPlan) -> BaseXBar:
    """A crossbar of gem5 class ``cls`` (its role: L2XBar in front of a cache, SystemXBar
    at a point of coherence, NoncoherentXBar) with the width and latencies of ``timing``."""
    params = dict(width=timing.width, frontend_latency=timing.frontend_latency,
                  forward_latency=timing.forward_latency,
                  response_latency=timing.response_latency,
                  header_latency=timing.header_latency)
    if timing.coherent:
        params["snoop_response_latency"] = timing.snoop_response_latency
    return cls(**params)


class PlanCacheHierarchy(AbstractClassicCacheHierarchy):
    """Classic caches wired exactly as their sharing groups (and NUMA paths) say."""

    def __init__(
        self,
        caches: Sequence[CachePlan],
        cache_bus: XBarPlan,
        system_bus: XBarPlan,
        page_walk_cache_size: int,
        snoop_filter_capacity: int,
        io_cache: Optional[IOCachePlan] = None,
        membus: Optional[BaseXBar] = None,
        numa_requesters: Sequence[RequesterPlan] = (),
        banks: Sequence[BankPlan] = (),
        local_memory_latency: int = 0,
        bank_bus: Optional[XBarPlan] = None,
        numa_link: Optional[NumaLinkPlan] = None,
        dma_bridge_latency_ns: Optional[float] = None,
    ) -> None:
        """
        :param caches: every cache instance, each with its cores and the instance towards
            memory it connects to (``parent``; None: the memory side). Objects are named
            as the instances (l1d_0, l2_1), so the statistics say which one they count.
        :param cache_bus: width and latencies (cycles) of the crossbar in front of every
            outer instance (``bus_<instance>``), and of each NUMA requester's router.
        :param system_bus: width and latencies of the default ``membus``: coherent (a
            SystemXBar in front of memory) on a uniform machine; on a NUMA machine
            non-coherent, carrying only I/O, interrupts and functional accesses.
        :param page_walk_cache_size: bytes of each core's instruction and data page-walk
            cache (behind its L1s, as in gem5's stdlib).
        :param snoop_filter_capacity: bytes every snoop filter can track; at least all the
            blocks the caches can hold (a full snoop filter panics gem5).
        :param io_cache: the cache that keeps device DMA coherent (uniform machines).
        :param membus: the system bus; by default built from ``system_bus``, with a bad
            address responder on its default port.
        :param numa_requesters: NUMA machines: every last-level requester, the cores behind
            it and its latency (cycles) to each bank. Empty: uniform memory.
        :param banks: NUMA machines: the memory banks, indexed as the requesters' latencies.
        :param local_memory_latency: NUMA machines: cycles of a local access; a link charges
            a requester's latency to its bank minus this (the bank charges the rest).
        :param bank_bus: NUMA machines: width and latencies of the coherent crossbar in
            front of each bank.
        :param numa_link: NUMA machines: the link caches' MSHRs, write buffers, response
            latency.
        :param dma_bridge_latency_ns: NUMA machines: the bridge that takes device DMA to
            memory uncached.
        """
        AbstractClassicCacheHierarchy.__init__(self)
        self._caches = tuple(caches)
        self._cache_bus = cache_bus
        self._system_bus = system_bus
        self._page_walk_cache_size = page_walk_cache_size
        self._snoop_filter_capacity = snoop_filter_capacity
        self._io_cache = io_cache
        self._requesters = tuple(numa_requesters)
        self._banks = tuple(banks)
        self._local_memory_latency = local_memory_latency
        self._bank_bus = bank_bus
        self._numa_link = numa_link
        self._dma_bridge_latency_ns = dma_bridge_latency_ns
        self._numa = bool(self._requesters)
        needs = ({"banks": self._banks or None, "bank_bus": bank_bus, "numa_link": numa_link,
                  "dma_bridge_latency_ns": dma_bridge_latency_ns} if self._numa
                 else {"io_cache": io_cache})
        missing = [name for name, value in needs.items() if value is None]
        if missing:
            raise ValueError(f"PlanCacheHierarchy needs {', '.join(missing)} "
                             f"{'with' if self._numa else 'without'} NUMA requesters")
        self.membus = membus if membus is not None else self._default_membus()

    def _default_membus(self) -> BaseXBar:
        membus = crossbar(SystemXBar if self._system_bus.coherent else NoncoherentXBar,
                          self._system_bus)
        membus.badaddr_responder = BadAddr()
        membus.default = membus.badaddr_responder.pio
        return membus

    @overrides(AbstractClassicCacheHierarchy)
    def get_mem_side_port(self) -> Port:
        return self.membus.mem_side_ports

    @overrides(AbstractClassicCacheHierarchy)
    def get_cpu_side_port(self) -> Port:
        return self.membus.cpu_side_ports

    @overrides(AbstractCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        board.connect_system_port(self.membus.cpu_side_ports)
        cores = board.get_processor().get_cores()

        # One cache object per instance, named as the instance (l1d_0, l2_1, ...); a
        # crossbar in front of every outer instance (bus_l2_1).
        by_name: Dict[str, PlanCache] = {}
        bus_of: Dict[str, BaseXBar] = {}
        for c in self._caches:
            by_name[c.name] = PlanCache(
                size=c.size, assoc=c.assoc, tag_latency=c.tag_latency,
                data_latency=c.data_latency, response_latency=c.response_latency,
                mshrs=c.mshrs, tgts_per_mshr=c.tgts_per_mshr)
            setattr(self, c.name, by_name[c.name])
            if c.level > 1:
                bus_of[c.name] = crossbar(L2XBar, self._cache_bus)
                setattr(self, f"bus_{c.name}", bus_of[c.name])
        for c in self._caches:
            if c.level > 1:
                bus_of[c.name].mem_side_ports = by_name[c.name].cpu_side

        # Where the memory side of each top-level instance (and each core without shared
        # cache) goes: the system bus (uniform memory) or its NUMA router.
        top_port = self._memory_side(board)

        for c in self._caches:
            if c.parent is not None:
                by_name[c.name].mem_side = bus_of[c.parent].cpu_side_ports
            else:
                by_name[c.name].mem_side = top_port(c.cores)

        self.iptw_caches = [self._page_walk_cache() for _ in cores]
        self.dptw_caches = [self._page_walk_cache() for _ in cores]
        for i, cpu in enumerate(cores):
            l1i, l1d = l1_of(self._caches, i, "instruction"), l1_of(self._caches, i, "data")
            cpu.connect_icache(by_name[l1i.name].cpu_side)
            cpu.connect_dcache(by_name[l1d.name].cpu_side)
            cpu.connect_walker_ports(self.iptw_caches[i].cpu_side, self.dptw_caches[i].cpu_side)
            # The page-walk caches sit behind the L1s: on the crossbar of the next level.
            for ptw in (self.iptw_caches[i], self.dptw_caches[i]):
                ptw.mem_side = (bus_of[l1d.parent].cpu_side_ports if l1d.parent is not None
                                else top_port((i,)))
            # x86 interrupts (local APIC messages) travel over the system bus.
            cpu.connect_interrupt(self.membus.mem_side_ports, self.membus.cpu_side_ports)

        if board.has_coherent_io():
            self._setup_io(board)
        for xbar in self.descendants():
            if isinstance(xbar, CoherentXBar) and xbar.snoop_filter is not NULL:
                xbar.snoop_filter.max_capacity = f"{self._snoop_filter_capacity}B"

    def _page_walk_cache(self) -> MMUCache:
        cache = MMUCache(size=f"{self._page_walk_cache_size}B", writeback_clean=False)
        # gem5's MMUCache comes with a stride prefetcher; no level of our model prefetches.
        cache.prefetcher = NULL
        return cache

    # ---------------------------------------------------------------- memory side
    def _memory_side(self, board: AbstractBoard) -> Callable[[Tuple[int, ...]], Port]:
        """Return f(cores) -> the port the top of those cores' hierarchy connects to."""
        if not self._numa:
            for _, port in board.get_memory().get_mem_ports():
                self.membus.mem_side_ports = port
            return lambda cores: self.membus.cpu_side_ports

        # The point of coherence of each bank: a system crossbar in front of it.
        bank_buses = [crossbar(SystemXBar, self._bank_bus) for _ in self._banks]
        for i, bus in enumerate(bank_buses):
            setattr(self, f"bank_bus_{i}", bus)
        for bus, (_, port) in zip(bank_buses, board.get_memory().get_mem_ports()):
            bus.mem_side_ports = port
            # Functional accesses (kernel loading) and DMA reach memory via the system bus.
            self.membus.mem_side_ports = bus.cpu_side_ports

        router_of = {}
        link = self._numa_link
        for r in self._requesters:
            router = crossbar(L2XBar, self._cache_bus)
            setattr(self, r.name, router)
            # Anything that is not memory (PIO, APICs, m5ops) goes to the system bus.
            router.default = self.membus.cpu_side_ports
            router.use_default_range = False
            for i, bank in enumerate(self._banks):
                path = NumaLinkCache(
                    extra_cycles=r.bank_latency_cycles[i] - self._local_memory_latency,
                    line_size=int(board.cache_line_size), bank_start=bank.start,
                    bank_size=bank.size, mshrs=link.mshrs, tgts_per_mshr=link.tgts_per_mshr,
                    write_buffers=link.write_buffers, response_latency=link.response_latency)
                # Named per path (r.link(i)): the statistics count each path's traffic.
                setattr(self, r.link(i), path)
                path.cpu_side = router.mem_side_ports
                path.mem_side = bank_buses[i].cpu_side_ports
            for core in r.cores:
                router_of[core] = router
        return lambda cores: router_of[cores[0]].cpu_side_ports

    def _setup_io(self, board: AbstractBoard) -> None:
        if self._numa:
            # Device DMA (none expected: pci=off, no disk) reaches memory uncached.
            self.dma_bridge = Bridge(delay=f"{self._dma_bridge_latency_ns:g}ns",
                                     ranges=board.mem_ranges[:1])
            self.dma_bridge.cpu_side_port = board.get_mem_side_coherent_io_port()
            self.dma_bridge.mem_side_port = self.membus.cpu_side_ports
            return
        io = self._io_cache
        self.iocache = IOCache(size=io.size, assoc=io.assoc, tag_latency=io.tag_latency,
                               data_latency=io.data_latency,
                               response_latency=io.response_latency, mshrs=io.mshrs,
                               tgts_per_mshr=io.tgts_per_mshr, addr_ranges=board.mem_ranges)
        self.iocache.mem_side = self.membus.cpu_side_ports
        self.iocache.cpu_side = board.get_mem_side_coherent_io_port()
