"""schedlab.backends.gem5.topology on what real guests reported (no gem5 needed to run these tests).

Fixtures tests/data/gem5/facts-<machine>.json are the runner's topology facts from real gem5
runs (see tests/data/gem5/README.md). A guest that matches its model gives no problems; each
kind of mismatch (package, siblings, LLC domain, CPU count, NUMA nodes) is reported.
"""

import json
from pathlib import Path

import pytest

from schedlab.backends.gem5.topology import topology_problems
from schedlab.backends.gem5.plan import plan_from_dict
from schedlab.machine import load_machine


def _problems(machine: dict, facts: dict) -> list[str]:
    return topology_problems(plan_from_dict(machine), machine, facts)


DATA = Path(__file__).parent / "data" / "gem5"
FIXTURES = sorted(DATA.glob("facts-*.json"))


def _machine(path: Path) -> dict:
    return load_machine(path.stem[len("facts-"):]).to_dict()


@pytest.mark.skipif(not FIXTURES, reason="no real guest facts yet (tests/data/gem5/README.md)")
@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_real_guest_matches_its_model(path):
    assert _problems(_machine(path), json.loads(path.read_text())) == []


@pytest.mark.skipif(not FIXTURES, reason="no real guest facts yet (tests/data/gem5/README.md)")
@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_mismatches_are_reported(path):
    machine, facts = _machine(path), json.loads(path.read_text())
    wrong_pkg = {**facts, "cpu1.package": "7"}
    assert any("cpu1: package 7" in p for p in _problems(machine, wrong_pkg))
    wrong_sib = {**facts, "cpu0.core_siblings": "0-63"}
    assert any("cpu0: core siblings 0-63" in p for p in _problems(machine, wrong_sib))
    fewer = {**facts, "cpus.online": "0"}
    assert any("guest has CPUs 0" in p for p in _problems(machine, fewer))
    # A guest without a domain for the shared LLC (gem5's default CPUID) is caught.
    groups = plan_from_dict(machine).llc_groups
    if any(len(g) > 1 for g in groups):
        cpu = next(g for g in groups if len(g) > 1)[0]
        no_llc = {k: v for k, v in facts.items() if not k.startswith(f"cpu{cpu}.domain")}
        assert any(f"cpu{cpu}: first scheduling domain spans nothing" in p
                   for p in _problems(machine, no_llc))


def test_numa_nodes_are_checked():
    # Westmere's two sockets are two nodes: a guest with one node is reported.
    machine = load_machine("westmere-x5660").to_dict()
    problems = _problems(machine, {"node0.cpus": "0-11"})
    assert "node0: guest CPUs 0-11, modelled 0-5" in problems
    assert "node1: guest CPUs None, modelled 6-11" in problems


def test_numa_node_memory_must_be_the_banks():
    # The real Westmere guest's nodes hold what the model's two banks hold (1.5 GiB each,
    # less the kernel's reservations)...
    machine = load_machine("westmere-x5660").to_dict()
    facts = json.loads((DATA / "facts-westmere-x5660.json").read_text())
    assert _problems(machine, facts) == []
    # ...a guest whose numa=fake split missed the banks is reported (Hector's 64 MiB
    # stations once gave node 0 another 32 MiB at the top and node 3 only 32 MiB).
    skewed = {**facts, "node0.mem_kb": str(2 * 1536 * 1024 - 800_000),
              "node1.mem_kb": "800000"}
    problems = _problems(machine, skewed)
    assert "node1: guest memory 781 MiB, modelled banks 1536 MiB" in problems
    assert any(p.startswith("node0: guest memory") for p in problems)


# The arguments gem5 guests have had since 2026-11-23 (the TSC clock, the periodic tick).
NEW_ARGS = ("tsc=reliable", "tsc_early_khz=", "nohz=off")


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_command_line_is_current_or_annotated(path):
    # A fixture made with an older kernel command line must say so in the README, and must
    # have exactly the older line the README describes (today's less the TSC/tick args).
    from schedlab.backends.gem5.checkpoint import run_kernel_args
    machine = _machine(path)
    current = run_kernel_args(machine, plan_from_dict(machine))
    recorded = json.loads(path.read_text())["kernel.cmdline"].split()
    if recorded == current:
        return
    readme = (DATA / "README.md").read_text()
    assert f"| `{path.name}` |" in readme, f"{path.name}: old command line not annotated"
    # Before 2026-11-25 every guest kernel ran at 1000 Hz (Hector's now runs at 100).
    at_1000_hz = f"lpj={machine['clock_hz'] // 1000}"
    older = [at_1000_hz if a.startswith("lpj=") else a
             for a in current if not a.startswith(NEW_ARGS)]
    assert recorded == older, recorded
