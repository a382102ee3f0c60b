"""gem5's own PrivateL1SharedL2CacheHierarchy, for the overhead benchmark only.

``bench/bench_gem5.py`` compares the host cost of our parametric hierarchy with the stock
one on the machines both can model (private L1s, one L2 shared by all cores).
"""

from gem5.components.boards.abstract_board import AbstractBoard

from schedlab.backends.gem5.plan import CachePlan


def stock_hierarchy(l1d: CachePlan, l1i: CachePlan, l2: CachePlan, matched: bool):
    """gem5's PrivateL1SharedL2CacheHierarchy with the sizes and associativities of these
    instances. ``matched`` also gives its caches their latencies and MSHRs and removes the
    stride prefetchers, so that it simulates the same machine as ours (the dry test checks
    it object for object) and only the host cost of the two differs; unmatched, its caches
    keep gem5's own timing and prefetchers."""
    from gem5.components.cachehierarchies.classic.private_l1_shared_l2_cache_hierarchy import (
        PrivateL1SharedL2CacheHierarchy,
    )
    from m5.params import NULL

    class MatchedStock(PrivateL1SharedL2CacheHierarchy):
        def incorporate_cache(self, board: AbstractBoard) -> None:
            super().incorporate_cache(board)
            caches = [(c, l1i) for c in self.l1icaches] + [(c, l1d) for c in self.l1dcaches]
            for cache, like in caches + [(self.l2cache, l2)]:
                for param in ("tag_latency", "data_latency", "response_latency", "mshrs",
                              "tgts_per_mshr"):
                    setattr(cache, param, getattr(like, param))
                cache.prefetcher = NULL
            for ptw in self.iptw_caches + self.dptw_caches:
                ptw.prefetcher = NULL
            # The L2 crossbar and the memory bus are timed as ours already (gem5's L2XBar
            # and SystemXBar defaults, the plan's CACHE_BUS and SYSTEM_BUS).

    cls = MatchedStock if matched else PrivateL1SharedL2CacheHierarchy
    return cls(l1d_size=f"{l1d.size}B", l1i_size=f"{l1i.size}B", l2_size=f"{l2.size}B",
               l1d_assoc=l1d.assoc, l1i_assoc=l1i.assoc, l2_assoc=l2.assoc)
