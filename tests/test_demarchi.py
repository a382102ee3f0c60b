"""Study 2's definitions and its per-task miss rates (schedlab.campaigns.demarchi,
schedlab.analysis.demarchi)."""

from __future__ import annotations

import pytest

from schedlab.analysis.demarchi import _miss_rates
from schedlab.campaigns.experiment import get


@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_every_run_has_the_same_background_under_every_policy(scale):
    runs = get("demarchi-table1").requests(scale, "gem5")
    assert {r.policy for r in runs} == {"vanilla", "task-affinity"}
    backgrounds = {r.background for r in runs}
    assert len(backgrounds) == 1
    (noise,) = backgrounds.pop()
    # Unbound and not real-time: the FIFO mixer preempts it as it would real daemons.
    assert noise.workload == "sysnoise" and noise.cpus is None and noise.sched == "other"
    assert all(r.jobs[0].sched == "fifo" for r in runs)


def test_miss_rates_per_task_and_together():
    # Counters as the attribution charges them to each thread id.
    job = {"tasks": {
        "101": {"l1d_load_misses": 10.0, "l1d_load_accesses": 100.0,
                "l1d_store_misses": 1.0, "l1d_store_accesses": 50.0},
        "102": {"l1d_load_misses": 30.0, "l1d_load_accesses": 100.0,
                "l1d_store_misses": 3.0, "l1d_store_accesses": 50.0},
        "999": {"l1d_load_misses": 500.0, "l1d_load_accesses": 600.0}}}   # not the mixer's
    out = _miss_rates(job, {"wave0": 101, "mixer2": 102, "mixer1": 103})
    assert out["wave0_l1d_load_miss_rate"] == 0.1 and out["mixer2_l1d_store_miss_rate"] == 0.06
    assert out["mixer_l1d_load_miss_rate"] == 0.2 and out["mixer_l1d_store_miss_rate"] == 0.04
    assert not any(k.startswith("mixer1_") for k in out)     # never charged: no rate
    assert "mixer_llc_load_miss_rate" not in out              # no last-level counts given
