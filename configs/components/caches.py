"""One classic cache instance, sized and timed from a ``CachePlan``.

Models any level of the catalogue's machines (e.g. the Xeon E5320's 4 MB 16-way L2 shared
by the two cores of a chip). Latencies are in cycles of the board clock, which is the core
clock: the catalogue's hit latency is both the tag and the data latency (gem5 then charges
max(tag, data) = that latency on a hit with parallel tag/data access), and the response
path takes ``response_latency`` cycles. No prefetcher: the catalogue notes that the real
parts' prefetchers are not modelled.
"""

from m5.objects import AddrRange, Cache

# A NUMA link cache must never be what limits the requests in flight: more MSHRs and write
# buffers than any requester above it has (an LLC: 20 MSHRs + 8 write buffers; a core's two
# L1s: 2 x 16 MSHRs).
LINK_MSHRS = 64
LINK_TARGETS = 16


class PlanCache(Cache):
    """A classic (non-Ruby, checkpointable) cache built from one plan entry."""

    def __init__(self, plan_cache):
        super().__init__()
        self.size = f"{plan_cache.size}B"
        self.assoc = plan_cache.assoc
        self.tag_latency = plan_cache.tag_latency
        self.data_latency = plan_cache.data_latency
        self.response_latency = plan_cache.response_latency
        self.mshrs = plan_cache.mshrs
        self.tgts_per_mshr = plan_cache.tgts_per_mshr
        # Instruction caches never hold dirty data; not writing clean lines back keeps the
        # outer levels' traffic what the hardware sees (gem5 stdlib does the same).
        self.writeback_clean = False
        self.clusivity = "mostly_incl"
        # Whether the L1 lookups are counted as I- or D-side is in the object name
        # (l1i_0, l1d_0), which the stats parser keeps.


class NumaLinkCache(Cache):
    """The path from one requester of a NUMA machine (an LLC instance, or one core's L1s when
    there is no shared cache) to one memory bank: Westmere's QPI link to the other socket,
    Hector's station bus or ring, or, with no extra latency, the way to the local bank.

    It is a cache of a single line because gem5's classic crossbars cannot be chained in
    timing mode: a crossbar forwarding a snoop response has no way to hold it when the next
    crossbar refuses it ("was not expecting a snoop retry"), while a cache queues it. A cache,
    unlike gem5's MemDelay, also takes part in coherence: nothing crossing it is invisible
    to snoops. It charges ``extra_cycles`` on every request and snoop passing towards the
    bank (and on a snoop's answer), forwards fills without keeping them (mostly exclusive)
    and so only ever holds the last dirty line written back through it.
    """

    def __init__(self, extra_cycles: int, line_bytes: int, bank_start: int, bank_size: int):
        super().__init__()
        self.size = f"{line_bytes}B"
        self.assoc = 1
        self.tag_latency = extra_cycles
        self.data_latency = extra_cycles
        self.response_latency = 0
        # Never the bottleneck: more than everything the requester above can have in flight.
        self.mshrs = LINK_MSHRS
        self.tgts_per_mshr = LINK_TARGETS
        self.write_buffers = LINK_MSHRS
        self.writeback_clean = False
        self.clusivity = "mostly_excl"
        self.addr_ranges = [AddrRange(bank_start, size=bank_size)]

