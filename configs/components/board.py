"""The machine as a gem5 X86Board: our processor, hierarchy and memory, our kernel.

Models the catalogue machine the plan was derived from, clocked at its core clock (the
board clock drives the caches and crossbars, so their latencies are core cycles). The guest
is a vmlinux with its initramfs built in (gem5's X86 loader takes no separate initrd) and no
disk; the run specification reaches the guest through ``m5 readfile``.
"""

from __future__ import annotations

from pathlib import Path

from gem5.components.boards.x86_board import X86Board

from .hierarchy import PlanCacheHierarchy
from .memory import PlanMemory
from .processor import FastForwardProcessor, PlanProcessor


def _stock_hierarchy(plan, matched: bool):
    """gem5's PrivateL1SharedL2CacheHierarchy with the plan's sizes; ``matched`` also gives
    its caches the plan's latencies and removes their stride prefetchers, so that it
    simulates the same machine as ours and only the host cost of the two differs."""
    from gem5.components.cachehierarchies.classic.private_l1_shared_l2_cache_hierarchy import (
        PrivateL1SharedL2CacheHierarchy,
    )
    from gem5.components.boards.abstract_board import AbstractBoard
    from m5.params import NULL

    if not plan.has_one_shared_l2():
        raise ValueError(f"{plan.machine}: the stock PrivateL1SharedL2CacheHierarchy needs "
                         f"private L1s and one L2 shared by all cores")
    l1d, l1i, l2 = plan.instances("l1d")[0], plan.instances("l1i")[0], plan.instances("l2")[0]

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
            # and SystemXBar defaults).

    cls = MatchedStock if matched else PrivateL1SharedL2CacheHierarchy
    return cls(l1d_size=f"{l1d.size}B", l1i_size=f"{l1i.size}B", l2_size=f"{l2.size}B",
               l1d_assoc=l1d.assoc, l1i_assoc=l1i.assoc, l2_assoc=l2.assoc)


class PlanBoard(X86Board):
    """An X86Board built entirely from a BoardPlan."""

    def __init__(self, plan, cpu: str, hierarchy: str = "plan", fast_forward: bool = False):
        """``fast_forward``: restore into Atomic cores and switch to ``cpu`` cores at the
        region of interest (FastForwardProcessor); otherwise every core is a ``cpu`` core.
        ``hierarchy="stock"`` swaps in gem5's PrivateL1SharedL2CacheHierarchy with the
        same sizes, ``"stock-matched"`` the same with our latencies and no prefetchers (only
        for machines with private L1s and one L2 shared by all cores); they exist to measure
        our hierarchy's simulation overhead (bench/bench_gem5.py)."""
        self._plan = plan
        processor = (FastForwardProcessor(plan, cpu) if fast_forward and cpu != "atomic"
                     else PlanProcessor(plan, cpu))
        super().__init__(clk_freq=plan.clock, processor=processor,
                         memory=PlanMemory(plan),
                         cache_hierarchy=(PlanCacheHierarchy(plan) if hierarchy == "plan"
                                          else _stock_hierarchy(
                                              plan, matched=hierarchy == "stock-matched")))
        # gem5 has one line size per system; the plan chose it (and noted the choice).
        self.cache_line_size = plan.line

    def set_guest(self, kernel: Path, command_line: str, readfile: Path | None,
                  checkpoint: Path | None = None) -> None:
        """Boot ``kernel`` (an ELF vmlinux) with ``command_line``; hand ``readfile`` to
        ``m5 readfile``; restore from ``checkpoint`` if given. Work items (m5 workbegin /
        workend) exit the simulation loop so the run script can bracket the ROI."""
        self._set_fullsystem(True)
        self.workload.object_file = str(kernel)
        self.workload.command_line = command_line
        if readfile is not None:
            self.readfile = str(readfile)
        self.exit_on_work_items = True
        self._checkpoint = checkpoint
