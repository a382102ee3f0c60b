"""Processor pools, host side (schedlab.guest.pools): the pool definitions runs write, the
/proc/sched_pools parser, and the pools-* policies brecht.py asks for."""

from __future__ import annotations

import pytest

from schedlab.campaigns import brecht
from schedlab.errors import UserError
from schedlab.guest import policies
from schedlab.guest.pools import (PLACEMENTS, job_cpus, parse_pool_cpus, parse_sched_pools,
                                  pool_cpus)
from schedlab.machine import load_machine

HECTOR_JOB_CPUS = tuple(range(4, 16))


def test_hector_keeps_station_0_out_of_the_pools():
    assert job_cpus(load_machine("hector")) == HECTOR_JOB_CPUS


@pytest.mark.parametrize("size, text", [
    (12, "4-15"), (6, "4-9:10-15"), (4, "4-7:8-11:12-15"), (3, "4-6:7-9:10-12:13-15"),
    (2, "4-5:6-7:8-9:10-11:12-13:14-15"), (1, "4:5:6:7:8:9:10:11:12:13:14:15")])
def test_pool_cpus_cuts_the_job_cpus_in_order(size, text):
    assert pool_cpus(HECTOR_JOB_CPUS, size) == text
    assert parse_pool_cpus(text) == tuple(HECTOR_JOB_CPUS[i:i + size]
                                          for i in range(0, 12, size))


def test_pool_cpus_refuses_sizes_that_do_not_divide():
    with pytest.raises(UserError, match="pools of 5"):
        pool_cpus(HECTOR_JOB_CPUS, 5)


def test_parse_pool_cpus_accepts_what_the_kernel_accepts():
    assert parse_pool_cpus("") == () and parse_pool_cpus(" \n") == ()
    assert parse_pool_cpus("4-5,9:6\n") == ((4, 5, 9), (6,))


@pytest.mark.parametrize("text, message", [
    ("4-7:8-x", "pool 1 '8-x'.*not a CPU list"),
    ("4-7::8", "pool 1 ''.*not a CPU list"),
    ("4-7,8-11", None),                 # one pool of 8: a comma is not a pool separator
    ("4-7:7-9", "pool 1 '7-9'.*shares CPU 7"),
    ("7-4", "not a CPU list"),
])
def test_parse_pool_cpus_refuses_what_the_kernel_refuses(text, message):
    if message is None:
        assert parse_pool_cpus(text) == (tuple(range(4, 12)),)
        return
    with pytest.raises(UserError, match=message):
        parse_pool_cpus(text)


PROC = """enabled: 1
placement: worst-fit-jobs
placed first-fit: 1
placed best-fit: 0
placed worst-fit: 2
placed worst-fit-jobs: 3
expansions: 9
spills: 1
failures: 4
pool 0: cpus 4-5 free 0 jobs 2
pool 1: cpus 6-7 free 1 jobs 1
cpu 4: pool 0 tgid 101 pid 101
cpu 5: pool 0 tgid 102 pid 102
cpu 6: pool 1 tgid 101 pid 105
cpu 7: pool 1 free
"""


def test_parse_sched_pools_reads_counters_pools_and_holders():
    s = parse_sched_pools(PROC)
    assert s.enabled and s.placement == "worst-fit-jobs"
    assert s.placed == {"first-fit": 1, "best-fit": 0, "worst-fit": 2, "worst-fit-jobs": 3}
    assert (s.expansions, s.spills, s.failures) == (9, 1, 4)
    assert [(p.cpus, p.free, p.jobs) for p in s.pools] == [((4, 5), 0, 2), ((6, 7), 1, 1)]
    assert s.holders == {4: (101, 101), 5: (102, 102), 6: (101, 105), 7: None}
    assert s.cpus_of(101) == [4, 6] and s.pools_of(101) == {0: 1, 1: 1}


def test_parse_sched_pools_names_what_it_cannot_read():
    with pytest.raises(UserError, match="cannot read line 'cpu 4 is busy'"):
        parse_sched_pools(PROC + "cpu 4 is busy\n")
    with pytest.raises(UserError, match="missing or bad field 'failures'"):
        parse_sched_pools(PROC.replace("failures: 4\n", ""))


def test_every_pools_policy_of_study_4_is_registered_with_hectors_pools():
    known = policies.load_policies()
    asked = {r.policy for e in brecht.EXPERIMENTS for r in e.matrix("smoke", "gem5")}
    assert asked and asked <= set(known), asked - set(known)
    for name in (n for n in known if n.startswith("pools-")):
        size, placement = name.removeprefix("pools-").split("-", 1)
        sysctl = known[name]["sysctl"]
        assert sysctl["kernel.sched_pools"] == 1, name
        assert sysctl["kernel.sched_pool_cpus"] == pool_cpus(HECTOR_JOB_CPUS, int(size)), name
        assert PLACEMENTS[sysctl["kernel.sched_pool_placement"]] == placement, name
    # Every placement policy has a policy, on Hector's pools of 4 (Fig. 5's).
    assert {f"pools-4-{p}" for p in PLACEMENTS} <= set(known)
