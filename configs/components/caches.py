"""The classic caches of our hierarchy: the catalogue's caches, the I/O cache, NUMA links.

Latencies are in cycles of the board clock, which is the core clock; sizes in bytes. No
cache here prefetches: the catalogue notes that the real parts' prefetchers are not
modelled.
"""

from m5.objects import AddrRange, Cache


class PlanCache(Cache):
    """One instance of a catalogue cache, at any level: e.g. one of the Xeon E5320's
    4 MiB 16-way L2s, shared by the two cores of a chip, or a core's 32 KiB L1 D.

    Mostly inclusive, and it never writes clean lines back: instruction caches hold no dirty
    data, and not writing clean lines keeps the outer levels' traffic what the hardware sees
    (gem5's stdlib L1 caches do the same). Whether its lookups count as I- or D-side is in
    the object name the hierarchy gives it (l1i_0, l1d_0), which the stats parser keeps.
    """

    def __init__(self, size: int, assoc: int, tag_latency: int, data_latency: int,
                 response_latency: int, mshrs: int, tgts_per_mshr: int):
        """
        :param size: capacity in bytes.
        :param assoc: ways per set.
        :param tag_latency: cycles of the tag lookup; with data_latency equal to it (the
            catalogue's hit latency), gem5 charges max(tag, data) = that latency on a hit
            (parallel tag and data access).
        :param data_latency: cycles of the data array access.
        :param response_latency: cycles of the response path towards the core.
        :param mshrs: miss status holding registers (outstanding misses).
        :param tgts_per_mshr: requests that can wait on one outstanding miss.
        """
        super().__init__()
        self.size = f"{size}B"
        self.assoc = assoc
        self.tag_latency = tag_latency
        self.data_latency = data_latency
        self.response_latency = response_latency
        self.mshrs = mshrs
        self.tgts_per_mshr = tgts_per_mshr
        self.writeback_clean = False
        self.clusivity = "mostly_incl"


class IOCache(Cache):
    """The small cache through which device DMA reaches the memory bus of a uniform
    machine coherently with the CPUs' caches (the chipset's snooping DMA path), as in
    gem5's stdlib classic hierarchies."""

    def __init__(self, size: int, assoc: int, tag_latency: int, data_latency: int,
                 response_latency: int, mshrs: int, tgts_per_mshr: int,
                 addr_ranges: list):
        """
        :param size: capacity in bytes.
        :param assoc: ways per set.
        :param tag_latency: cycles; likewise ``data_latency`` and ``response_latency``.
        :param mshrs: outstanding misses.
        :param tgts_per_mshr: requests that can wait on one outstanding miss.
        :param addr_ranges: the memory ranges DMA may reach (the board's memory).
        """
        super().__init__(assoc=assoc, tag_latency=tag_latency, data_latency=data_latency,
                         response_latency=response_latency, mshrs=mshrs,
                         size=f"{size}B", tgts_per_mshr=tgts_per_mshr,
                         addr_ranges=addr_ranges)


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

    def __init__(self, extra_cycles: int, line_size: int, bank_start: int, bank_size: int,
                 mshrs: int, tgts_per_mshr: int, write_buffers: int, response_latency: int):
        """
        :param extra_cycles: cycles this bank costs from this requester over the local
            bank (the catalogue's node or remote latency minus its local latency; 0 for
            the local bank). Charged as both tag and data latency.
        :param line_size: the system's cache-line size in bytes: the link holds one line.
        :param bank_start: first byte address of the bank the link leads to.
        :param bank_size: size of that bank in bytes; the link answers for it only.
        :param mshrs: outstanding misses; more than the requester above can have, so that
            the link never limits the traffic. Likewise ``write_buffers``.
        :param tgts_per_mshr: requests that can wait on one outstanding miss.
        :param response_latency: cycles added on the way back (the extra cycles are
            charged on the way to the bank).
        """
        super().__init__()
        self.size = f"{line_size}B"
        self.assoc = 1
        self.tag_latency = extra_cycles
        self.data_latency = extra_cycles
        self.response_latency = response_latency
        self.mshrs = mshrs
        self.tgts_per_mshr = tgts_per_mshr
        self.write_buffers = write_buffers
        self.writeback_clean = False
        self.clusivity = "mostly_excl"
        self.addr_ranges = [AddrRange(bank_start, size=bank_size)]
