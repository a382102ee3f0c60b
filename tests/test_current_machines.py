"""Today's machines beside the papers': a Zen 4 chiplet part (an L3 per CCD) and a Sapphire
Rapids part in SNC4 (an L3 share and a memory node per cluster), scaled to 8 cores. Their
scaling keeps the sharing pattern and the L3 per core; QEMU guests see their topology."""

from __future__ import annotations

import json

import pytest

from conftest import qemu_topology_problems
from schedlab.backends import qemu
from schedlab.machine import load_machine
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare

# name: (LLC groups, NUMA nodes, L3 bytes per core of the real part, QEMU -smp)
CURRENT = {
    "ryzen-9-7950x": (((0, 1, 2, 3), (4, 5, 6, 7)), ((0, 1, 2, 3, 4, 5, 6, 7),),
                      (32 << 20) // 8, "8,sockets=2,cores=4,threads=1"),
    "xeon-8480-snc4": (((0, 1), (2, 3), (4, 5), (6, 7)), ((0, 1), (2, 3), (4, 5), (6, 7)),
                       1920 << 10, "8,sockets=4,cores=2,threads=1"),
}


@pytest.mark.parametrize("name", CURRENT)
def test_scaled_parts_keep_their_sharing_and_l3_per_core(name):
    groups, nodes, l3_per_core, smp = CURRENT[name]
    m = load_machine(name)
    assert (m.llc.name, m.llc.groups, m.nodes) == ("l3", groups, nodes)
    assert m.llc.size == l3_per_core * len(groups[0])
    assert all(len(c.groups) == m.cores for c in m.caches if c.level < 3)   # private L1, L2
    assert "Sources:" in m.notes and "Scaled" in m.notes
    cmd = qemu.command(m, "k", "i", "", "c")
    assert cmd[cmd.index("-smp") + 1] == smp
    assert sum(a == "-numa" for a in cmd) == (0 if len(nodes) == 1 else
                                              len(nodes) + len(nodes) * (len(nodes) - 1) // 2)


@pytest.mark.parametrize("name", CURRENT)
def test_qemu_guest_sees_the_topology(name, results_dir):
    request = RunRequest(machine=name, jobs=(WorkloadRequest("memlat", cpus="7"),),
                         backend="qemu", timeout=900)
    run_dir = execute(prepare(request, progress=print), progress=print)
    res = json.loads((run_dir / "results.json").read_text())
    assert res["ok"], res["errors"]
    assert qemu_topology_problems(run_dir) == []
    facts = res["facts"]
    groups, nodes = CURRENT[name][:2]
    assert facts["cpu7.core_siblings"] == f"{groups[-1][0]}-7"
    assert f"node{len(nodes) - 1}.cpus" in facts and f"node{len(nodes)}.cpus" not in facts
