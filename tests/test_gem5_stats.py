"""The stats.txt parser, on real gem5 output (no gem5 needed to run these tests).

Fixtures tests/data/gem5/stats-<machine>-<cpu>.txt.gz are stats.txt files written by gem5
v24.0.0.1 (build/X86/gem5.fast) in tests/test_gem5_integration.py::test_restore_and_run_roi
(restore of the self-test guest's boot checkpoint, 200 000-iteration loop between m5
workbegin/workend), saved with SCHEDLAB_UPDATE_FIXTURES=1. See tests/data/gem5/README.md.
"""

import gzip
import re
from pathlib import Path

import pytest

from schedlab.backends.gem5.stats import cache_summary, core_summary, parse_stats, region_metrics

DATA = Path(__file__).parent / "data" / "gem5"
FIXTURES = sorted(DATA.glob("stats-*.txt.gz"))


# Read off the first (region-of-interest) block of each fixture by hand: per core
# numCycles and commitStats0.numInsts (the Timing cores' thread_0.numInsts reads 0), the
# demand misses of every cache instance, simSeconds, and gem5's own IPC of core 0.
HAND = {
    "stats-clovertown-e5320-mup-o3.txt.gz": {
        "cycles": (2401125, 130800), "insts": (2246963, 11157), "l1d": (64054, 372),
        "l1i": (784, 1093), "l2": (2538,), "sim_seconds": 0.001292, "gem5_ipc0": 0.935796},
    "stats-clovertown-e5320-mup-timing.txt.gz": {
        "cycles": (12111903, 761816436), "insts": (2269062, 26176), "l1d": (65754, 285),
        "l1i": (813, 947), "l2": (2597,), "sim_seconds": 0.006516, "gem5_ipc0": 0.187341},
}


def _grep(block: str, name: str) -> float:
    """The value of stat ``name`` in one dump's text, found without schedlab's parser."""
    m = re.search(rf"^{re.escape(name)}\s+(\S+)", block, re.MULTILINE)
    assert m, name
    return float(m.group(1))


@pytest.mark.skipif(not FIXTURES, reason="no real gem5 stats fixtures yet; produce them with "
                    "GEM5=... SCHEDLAB_UPDATE_FIXTURES=1 pytest tests/test_gem5_integration.py")
@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_real_stats(path):
    text = gzip.open(path, "rt").read()
    hand = HAND[path.name]
    # The hand-read numbers are those of the file's first block (checked with a plain
    # regular expression, not the module under test).
    first = text.split("---------- End Simulation Statistics")[0]
    core = "board.processor.cores{}.core."
    for i in (0, 1):
        assert _grep(first, core.format(i) + "numCycles") == hand["cycles"][i]
        assert _grep(first, core.format(i) + "commitStats0.numInsts") == hand["insts"][i]
    for cache in ("l1d", "l1i", "l2"):
        for i, n in enumerate(hand[cache]):
            assert _grep(first, f"board.cache_hierarchy.{cache}_{i}.demandMisses::total") == n
    assert _grep(first, "simSeconds") == hand["sim_seconds"]
    assert _grep(first, core.format(0) + "ipc") == hand["gem5_ipc0"]

    dumps = parse_stats(text)
    assert len(dumps) == text.count("Begin Simulation Statistics") >= 2   # ROI + exit dump
    roi = dumps[0]
    assert set(core_summary(roi)) == {0, 1}
    for c in cache_summary(roi).values():
        assert c["demandAccesses"] == c["demandHits"] + c["demandMisses"]

    # The results table's numbers for this region, computed by hand: the busiest core's
    # (core 0's) IPC = committed instructions / cycles, which gem5 prints as well; misses
    # of every instance of a cache summed, per 1000 instructions of both cores.
    m = region_metrics(roi)
    insts = sum(hand["insts"])
    # (to the 6 decimals gem5 prints its ipc with)
    assert m["ipc"] == pytest.approx(hand["insts"][0] / hand["cycles"][0], abs=1e-6)
    assert m["cycles"] == hand["cycles"][0]
    assert m["insts"] == insts
    for cache in ("l1d", "l1i", "l2"):
        assert m[f"{cache}_misses"] == sum(hand[cache])
        assert m[f"{cache}_mpki"] == pytest.approx(1000 * sum(hand[cache]) / insts, rel=1e-9)
    assert m["sim_seconds"] == hand["sim_seconds"]
    width = 1 if "-timing" in path.name else 4
    assert 0 < m["ipc"] <= width


def test_every_stats_fixture_has_hand_read_values():
    assert {p.name for p in FIXTURES} == set(HAND)


def test_task_attribution_between_switches():
    from schedlab.backends.gem5.attribution import TaskAttribution
    a = TaskAttribution()
    assert TaskAttribution.decode((1234 << 8) | 3) == (1234, 3)
    a.rebase(0, {"cycles": 0, "insts": 500})
    a.rebase(1, {"cycles": 0, "insts": 0})
    a.switch(0, 7, {"cycles": 100, "insts": 550})     # pid 7 ran on cpu 0
    a.switch(1, 8, {"cycles": 40, "insts": 10})       # pid 8 ran on cpu 1
    a.switch(0, 9, {"cycles": 160, "insts": 600})     # then pid 9 on cpu 0
    a.switch(0, 7, {"cycles": 200, "insts": 610})     # pid 7 again
    assert a.to_dict() == {"7": {"switches": 2, "cycles": 140, "insts": 60},
                           "8": {"switches": 1, "cycles": 40, "insts": 10},
                           "9": {"switches": 1, "cycles": 60, "insts": 50}}
    a.clear()
    assert a.to_dict() == {}


def test_task_attribution_across_core_switches_and_back_to_back_regions():
    """A CPU that moves to other cores mid-turn carries its counts over (handover), and
    regions that close before the CPU switches again (sampled windows) each get their
    share when it finally does."""
    from schedlab.backends.gem5.attribution import TaskAttribution
    a = TaskAttribution()
    a.rebase(0, {"insts": 100})                       # Atomic core: 100 so far
    a.handover(0, {"insts": 150}, {"insts": 7})       # to a detailed core with its own 7
    a.switch(0, 5, {"insts": 27})                     # pid 5: 50 + 20
    assert a.to_dict() == {"5": {"switches": 1, "insts": 70}}
    # Two windows, each closed with no switch inside: their shares are owed.
    w = TaskAttribution()
    w.rebase(0, {"insts": 0})
    first = w.close_region({0: {"insts": 10}})
    w.clear()
    w.rebase(0, {"insts": 30})
    second = w.close_region({0: {"insts": 45}})
    w.switch(0, 9, {"insts": 60})                     # pid 9 ran through both
    assert first == {9: {"switches": 0, "insts": 10}}
    assert second == {9: {"switches": 0, "insts": 15}}
    w.clear()
    w.rebase(0, {"insts": 65})
    third = w.close_region({0: {"insts": 70}})
    w.settle_owed()                                   # no switch came: pid -1
    assert third == {TaskAttribution.UNSETTLED: {"switches": 0, "insts": 5}}


NUMA_FIXTURE = DATA / "roi-westmere-x5660-o3.txt.gz"


def test_numa_traffic_by_latency_class_on_real_westmere_stats():
    """The memory accesses of a region by NUMA latency class, from the statistics of the
    links of a real Westmere O3 run (memlat pinned to CPU 0; see tests/data/gem5/README.md)."""
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.backends.gem5.stats import numa_traffic
    from schedlab.machine import load_machine

    (roi,) = parse_stats(gzip.open(NUMA_FIXTURE, "rt").read())
    plan = plan_from_dict(load_machine("westmere-x5660").to_dict())
    links = {r.link(b): cls for r in plan.memory.requesters
             for b, cls in enumerate(r.bank_class)}
    # Socket i's L3 reaches bank i locally and the other socket's bank remotely.
    assert links == {"req_l3_0_bank0": "local", "req_l3_0_bank1": "remote",
                     "req_l3_1_bank0": "remote", "req_l3_1_bank1": "local"}
    count = {name: roi[f"board.cache_hierarchy.{name}.demandAccesses::total"] for name in links}
    assert all(n > 0 for n in count.values())

    t = numa_traffic(roi, plan.memory.requesters)
    assert t["numa_local_accesses"] == count["req_l3_0_bank0"] + count["req_l3_1_bank1"]
    assert t["numa_remote_accesses"] == count["req_l3_0_bank1"] + count["req_l3_1_bank0"]
    assert t["numa_node_accesses"] == 0
    assert t["numa_local_share"] == pytest.approx(
        t["numa_local_accesses"] / (t["numa_local_accesses"] + t["numa_remote_accesses"]))
    # Every L3 miss crosses exactly one link, so the links' demand accesses are about the
    # L3s' demand misses.
    l3_misses = sum(roi[f"board.cache_hierarchy.l3_{i}.demandMisses::total"] for i in (0, 1))
    assert 0.9 * l3_misses < sum(count.values()) < 1.2 * l3_misses
    # The same numbers reach results.json through region_metrics; no links, no NUMA keys.
    assert region_metrics(roi, plan.memory.requesters)["numa_local_share"] == t["numa_local_share"]
    assert "numa_local_share" not in region_metrics(roi)
    assert numa_traffic(roi, ()) == {}


def test_task_metrics_give_load_and_store_miss_rates_where_accesses_are_counted():
    from schedlab.backends.gem5.stats import task_metrics
    m = task_metrics({"insts": 1000.0, "cycles": 2000.0, "switches": 3,
                      "l1d_misses": 50.0, "l1d_load_misses": 30.0, "l1d_load_accesses": 300.0,
                      "l1d_store_misses": 20.0, "l1d_store_accesses": 100.0})
    assert m["ipc"] == 0.5 and m["l1d_mpi"] == 0.05
    assert m["l1d_load_miss_rate"] == 0.1 and m["l1d_store_miss_rate"] == 0.2
    assert m["l1d_load_mpi"] == 0.03 and m["l1d_load_accesses"] == 300.0
    assert "l1d_miss_rate" not in m          # no accesses counted for all demand misses
