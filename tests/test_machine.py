"""The machine catalogue: every machine loads, derived structure, overrides, rejected input."""

from __future__ import annotations

import json

import pytest

from schedlab.errors import UserError
from schedlab.machine import load_machine, machine_names

PAPER_MACHINES = {"niagara", "clovertown-e5320", "clovertown-e5320-mup", "clovertown-e5320-mmp",
                  "clovertown-e5320-ump", "core-i7-920", "xeon-e5440", "clovertown-x5365",
                  "westmere-x5660", "hector"}


def test_catalogue_has_every_machine_of_the_papers():
    assert PAPER_MACHINES <= set(machine_names())


@pytest.mark.parametrize("name", machine_names())
def test_every_machine_is_consistent(name):
    m = load_machine(name)
    for cache in m.caches:
        assert sorted(c for g in cache.groups for c in g) == list(range(m.cores))
        assert cache.sets & (cache.sets - 1) == 0
        assert cache.sets * cache.assoc * cache.line == cache.size
    assert sorted(c for n in m.nodes for c in n) == list(range(m.cores))
    json.dumps(m.to_dict())  # the resolved machine is plain data


def test_clovertown_variants_share_l2_like_the_paper():
    assert load_machine("clovertown-e5320").cache("l2").groups == ((0, 1), (2, 3))
    mup = load_machine("clovertown-e5320-mup")
    assert (mup.cores, mup.cache("l2").groups) == (2, ((0, 1),))
    ump = load_machine("clovertown-e5320-ump")
    assert (ump.cores, ump.cache("l2").groups) == (2, ((0,), (1,)))


def test_cache_hierarchies():
    i7 = load_machine("core-i7-920")
    assert i7.cache("l2").groups == ((0,), (1,), (2,), (3,))
    assert i7.llc.name == "l3" and i7.llc.groups == ((0, 1, 2, 3),)
    westmere = load_machine("westmere-x5660")
    assert westmere.llc.groups == (tuple(range(6)), tuple(range(6, 12)))
    assert westmere.nodes == westmere.llc.groups
    assert load_machine("niagara").cache("l2").groups == (tuple(range(8)),)


def test_hector_delay_reproduces_the_papers_line_load_times():
    # Brecht, Hector: off-station cache line load for delay 0, 4, 8, 16, 32, 64.
    table = {0: 37, 4: 49, 8: 61, 16: 85, 32: 133, 64: 229}
    for delay, cycles in table.items():
        m = load_machine("hector", [f"memory.delay.cycles={delay}"])
        assert m.memory.remote_cycles(m.clock_hz) == cycles
    hector = load_machine("hector")
    assert hector.nodes == ((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15))
    assert hector.reserved_cores == (0, 1, 2, 3)


def test_hector_ticks_at_100_hz_and_the_others_at_the_default():
    hector = load_machine("hector")
    assert hector.tick_hz == 100 and hector.to_dict()["tick_hz"] == 100
    # Absent at the default, so the other machines' dicts (and run ids) did not change.
    assert "tick_hz" not in load_machine("clovertown-e5320-mup").to_dict()
    assert load_machine("clovertown-e5320-mup", ["tick_hz=250"]).tick_hz == 250


def test_overrides_make_hypothetical_machines():
    m = load_machine("clovertown-e5320", ["l2.size=8MiB", "l2.assoc=8", "clock=3GHz"])
    l2 = m.cache("l2")
    assert (l2.size, l2.assoc, l2.sets, m.clock_hz) == (8 << 20, 8, 16384, 3_000_000_000)
    assert m.overrides == ("l2.size=8MiB", "l2.assoc=8", "clock=3GHz")
    assert load_machine("clovertown-e5320", ["l2.shared_by=machine"]).llc.groups == ((0, 1, 2, 3),)
    numa = load_machine("clovertown-e5320", ["nodes=2", "memory.latency.remote=150ns"])
    assert numa.nodes == ((0, 1), (2, 3))
    assert numa.node_distances()[0][1] > 10


def test_the_ring_delay_moves_latency_but_not_the_guests_distances_or_checkpoint():
    from schedlab.backends.gem5.checkpoint import guest_boot_args
    from schedlab.backends.gem5.plan import plan_from_dict
    plain, delayed = (load_machine("hector", [f"memory.delay.cycles={d}"]) for d in (0, 64))
    assert delayed.memory.remote_cycles(delayed.clock_hz) == 37 + 3 * 64
    assert plain.node_distances() == delayed.node_distances() == [
        [10 if i == j else 19 for j in range(4)] for i in range(4)]     # 10 x 37 / 19
    plans = [plan_from_dict(m.to_dict()) for m in (plain, delayed)]
    assert plans[0].boot_identity() == plans[1].boot_identity()
    assert (guest_boot_args(plain.to_dict(), plans[0])
            == guest_boot_args(delayed.to_dict(), plans[1]))


@pytest.mark.parametrize("name, overrides, message", [
    ("nosuch", [], "unknown machine 'nosuch'"),
    ("niagara", ["l2.size=3000KiB"], "not a power of two"),
    ("niagara", ["l1d.line=48"], "line size 48 is not a power of two"),
    ("niagara", ["l2.flavour=big"], "unknown key 'l2.flavour'"),
    ("niagara", ["l2.size"], "not KEY=VALUE"),
    ("niagara", ["l2.size=huge"], "cannot read size"),
    ("niagara", ["clock=fast"], "cannot read clock"),
    ("hector", ["memory.delay.cycles=65"], "out of range"),
    ("core-i7-920", ["l1d.shared_by=machine"], "splits the cores sharing l1d"),
    ("clovertown-e5320", ["nodes=3"], "cannot be split into 3"),
    ("clovertown-e5320", ["nodes=2"], "needs memory.latency.remote"),
    ("niagara", ["pipeline.kind=vliw"], "pipeline.kind must be one of"),
    ("niagara", ["tick_hz=500"], "tick_hz must be one of 100, 250, 300, 1000"),
])
def test_bad_input_is_rejected_in_one_line(name, overrides, message):
    with pytest.raises(UserError) as err:
        load_machine(name, overrides)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def _catalogue(tmp_path, body: str):
    path = tmp_path / "machines.toml"
    path.write_text(body)
    return path


GOOD = """
[machines.tiny]
clock = "1GHz"
cores = 4
packages = 2
pipeline = { kind = "in-order", width = 1 }
[machines.tiny.caches]
l1d = { level = 1, kind = "data", size = "32KiB", assoc = 8, line = 64, latency = "3cycles" }
l2 = { level = 2, kind = "unified", size = "1MiB", assoc = 16, line = 64, latency = "10cycles", %s }
[machines.tiny.memory]
size_per_node = "1GiB"
latency = { local = "80ns" }
"""


def test_explicit_groups_must_partition_the_cores(tmp_path):
    ok = load_machine("tiny", path=_catalogue(tmp_path, GOOD % "groups = [[0, 2], [1, 3]]"))
    assert ok.cache("l2").groups == ((0, 2), (1, 3))
    for groups in ("[[0, 1], [1, 2, 3]]", "[[0, 1]]", "[[0, 1], [2, 3, 4]]"):
        with pytest.raises(UserError, match="do not partition"):
            load_machine("tiny", path=_catalogue(tmp_path, GOOD % f"groups = {groups}"))


def test_unknown_catalogue_keys_are_rejected(tmp_path):
    with pytest.raises(UserError, match="unknown key 'sharing'"):
        load_machine("tiny", path=_catalogue(tmp_path, GOOD % 'sharing = "package"'))
    # Appended after [machines.tiny.memory], so it is a misspelt memory key.
    bad = GOOD % 'shared_by = "package"' + "\nnode_size = '1GiB'\n"
    with pytest.raises(UserError, match="memory: unknown key 'node_size'"):
        load_machine("tiny", path=_catalogue(tmp_path, bad))


def test_broken_catalogue_file_is_one_line(tmp_path):
    with pytest.raises(UserError, match="not valid TOML"):
        load_machine("tiny", path=_catalogue(tmp_path, "[machines.tiny\n"))
