"""One classic cache instance, sized and timed from a ``CachePlan``.

Models any level of the catalogue's machines (e.g. the Xeon E5320's 4 MB 16-way L2 shared
by the two cores of a chip). Latencies are in cycles of the board clock, which is the core
clock: the catalogue's hit latency is both the tag and the data latency (gem5 then charges
max(tag, data) = that latency on a hit with parallel tag/data access), and the response
path takes ``response_latency`` cycles. No prefetcher: the catalogue notes that the real
parts' prefetchers are not modelled.
"""

from m5.objects import Cache


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
