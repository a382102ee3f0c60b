"""A board plan made into a gem5 board: the one place that reads a BoardPlan.

Each component (``components/``) takes typed, documented values; this module hands it the
plan's. The plan (``schedlab/backends/gem5/plan.py``) derives every value from the machine
catalogue or names where it comes from, so no number is typed here either.
"""

from __future__ import annotations

from components.board import PlanBoard
from components.hierarchy import PlanCacheHierarchy
from components.memory import PlanMemory
from components.processor import FastForwardProcessor, PlanProcessor
from components.stock_hierarchy import stock_hierarchy
from schedlab.backends.gem5.plan import BoardPlan

HIERARCHIES = ("plan", "stock", "stock-matched")


def plan_hierarchy(plan: BoardPlan) -> PlanCacheHierarchy:
    """Our parametric hierarchy with the plan's caches, crossbars and NUMA paths."""
    net, mem = plan.interconnect, plan.memory
    return PlanCacheHierarchy(
        caches=plan.caches, cache_bus=net.cache_bus, system_bus=net.system_bus,
        page_walk_cache_size=net.page_walk_cache_size,
        snoop_filter_capacity=net.snoop_filter_capacity, io_cache=net.io_cache,
        numa_requesters=mem.requesters, banks=mem.banks if mem.numa else (),
        local_memory_latency=mem.local_cycles, bank_bus=net.bank_bus,
        numa_link=net.numa_link, dma_bridge_latency_ns=net.dma_bridge_latency_ns)


def build_board(plan: BoardPlan, cpu: str, hierarchy: str = "plan",
                fast_forward: bool = False, bypass_caches: bool = False) -> PlanBoard:
    """The board of ``plan`` with ``cpu`` cores ("atomic", "timing", "o3", "kvm").

    ``fast_forward``: restore into Atomic cores and switch to ``cpu`` cores at the region
    of interest (FastForwardProcessor; ``bypass_caches``: NonCaching cores until the
    guest turns the caches on); otherwise every core is a ``cpu`` core.
    ``hierarchy="stock"`` swaps in gem5's PrivateL1SharedL2CacheHierarchy with the same
    sizes, ``"stock-matched"`` the same with our latencies and no prefetchers (only for
    machines with private L1s and one L2 shared by all cores); they exist to measure our
    hierarchy's simulation overhead (bench/bench_gem5.py)."""
    if hierarchy not in HIERARCHIES:
        raise ValueError(f"unknown hierarchy {hierarchy!r}; choose one of {', '.join(HIERARCHIES)}")
    if fast_forward and cpu != "atomic":
        processor = FastForwardProcessor(plan.cores, cpu, plan.o3, bypass_caches)
    else:
        processor = PlanProcessor(plan.cores, cpu, plan.o3)
    if hierarchy == "plan":
        caches = plan_hierarchy(plan)
    elif not plan.has_one_shared_l2():
        raise ValueError(f"{plan.machine}: the stock PrivateL1SharedL2CacheHierarchy needs "
                         f"private L1s and one L2 shared by all cores")
    else:
        caches = stock_hierarchy(plan.instances("l1d")[0], plan.instances("l1i")[0],
                                 plan.instances("l2")[0], matched=hierarchy == "stock-matched")
    return PlanBoard(clk_freq=plan.clock, processor=processor,
                     memory=PlanMemory(plan.memory.banks, plan.memory.device_latency_ns,
                                       plan.memory.jitter_ns),
                     cache_hierarchy=caches, cache_line_size=plan.line)
