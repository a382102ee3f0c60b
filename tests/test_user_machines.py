"""User machine files: entries deriving from a catalogue machine or standing alone, checked by
the catalogue's own validator, named FILE:NAME or found through --machines FILE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from schedlab.backends.gem5.plan import plan_from_dict
from schedlab.errors import UserError
from schedlab.machine import load_machine, machine_names, machine_ref

# A 6-core Clovertown with three L2 pairs (what '--set cores=6' cannot say), the same with
# one L2 for all, one derived from another entry, and a machine of its own with a variant.
MACHINES = """
[machines.clover6]
base = "clovertown-e5320"
description = "Clovertown with three chips"
cores = 6
packages = 3
[machines.clover6.caches]
l2 = { size = "2MiB" }

[machines.clover6-one-l2]
base = "clover6"
caches = { l2 = { shared_by = "machine", size = "8MiB" } }

[machines.mup-slow-memory]
base = "clovertown-e5320-mup"
memory = { latency = { local = "150ns" } }

[machines.tiny]
clock = "1GHz"
cores = 2
packages = 2
pipeline = { kind = "in-order", width = 1 }
variants = { one = { cores = [1] } }
[machines.tiny.caches]
l1d = { level = 1, kind = "data", size = "32KiB", assoc = 8, line = 64, latency = "3cycles" }
l2 = { level = 2, kind = "unified", size = "1MiB", assoc = 16, line = 64, latency = "10cycles", \
shared_by = "machine" }
[machines.tiny.memory]
size_per_node = "1GiB"
latency = { local = "80ns" }
"""


@pytest.fixture
def machines_file(tmp_path) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(MACHINES)
    return path


def _user(path: Path, name: str, overrides=()):
    return load_machine(f"{path}:{name}", overrides)


def test_derived_machine_changes_only_what_it_says(machines_file):
    base = load_machine("clovertown-e5320")
    m = _user(machines_file, "clover6")
    assert (m.name, m.cores, m.description) == ("clover6", 6, "Clovertown with three chips")
    assert m.cache("l2").groups == ((0, 1), (2, 3), (4, 5))
    assert m.cache("l2").size == 2 << 20
    assert m.cache("l2").assoc == base.cache("l2").assoc        # merged key by key
    assert m.cache("l1d") == base.cache("l1d").__class__(**{**vars(base.cache("l1d")),
                                                           "groups": tuple((c,) for c in range(6))})
    assert (m.clock_hz, m.pipeline, m.memory) == (base.clock_hz, base.pipeline, base.memory)
    assert m.studies == ()          # a changed machine is none of the papers'
    assert "clovertown-e5320's notes:" in m.notes
    json.dumps(m.to_dict())


def test_derived_from_an_entry_of_the_file_and_from_a_variant(machines_file):
    one = _user(machines_file, "clover6-one-l2")
    assert one.cores == 6 and one.llc.groups == (tuple(range(6)),)
    assert one.llc.size == 8 << 20
    slow = _user(machines_file, "mup-slow-memory")
    assert slow.cores == 2 and slow.cache("l2").groups == ((0, 1),)
    assert str(slow.memory.local) == "150ns"


def test_standalone_machine_and_its_variant(machines_file):
    tiny = _user(machines_file, "tiny")
    assert (tiny.cores, tiny.packages, tiny.llc.groups) == (2, ((0,), (1,)), ((0, 1),))
    assert _user(machines_file, "tiny-one").cores == 1
    assert machine_names(machines_file) == ["clover6", "clover6-one-l2", "mup-slow-memory",
                                            "tiny", "tiny-one"]


def test_overrides_apply_to_user_machines(machines_file):
    m = _user(machines_file, "clover6", ["l2.size=8MiB", "l2.assoc=8"])
    assert (m.cache("l2").size, m.cache("l2").assoc) == (8 << 20, 8)


def test_user_machines_have_a_gem5_plan(machines_file):
    plan = plan_from_dict(_user(machines_file, "clover6").to_dict())
    assert plan.guest_packages() == [[0, 1], [2, 3], [4, 5]]
    assert [c.cores for c in plan.instances("l2")] == [(0, 1), (2, 3), (4, 5)]
    # Caches are not part of what a boot checkpoint depends on.
    bigger = plan_from_dict(_user(machines_file, "clover6", ["l2.size=8MiB"]).to_dict())
    assert bigger.boot_identity() == plan.boot_identity()


def test_reference_names_the_file_absolutely(machines_file, monkeypatch):
    monkeypatch.chdir(machines_file.parent)
    assert machine_ref("clover6", "mine.toml") == f"{machines_file}:clover6"
    assert machine_ref("mine.toml:tiny") == f"{machines_file}:tiny"
    assert machine_ref("niagara", "mine.toml") == "niagara"       # the catalogue's still
    assert machine_ref("niagara") == "niagara"


def _error(tmp_path, body: str, name: str = "mine") -> str:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(UserError) as err:
        load_machine(f"{path}:{name}")
    assert "\n" not in str(err.value)
    return str(err.value)


DERIVED = '[machines.mine]\nbase = "clovertown-e5320"\n'


@pytest.mark.parametrize("body, message", [
    # Changing the cores needs the grouping said again.
    (DERIVED + "cores = 6\n", "changes cores from 4 to 6; say how they group: add packages = N"),
    ('[machines.grouped]\nbase = "clovertown-e5320"\n'
     'caches = { l2 = { groups = [[0, 2], [1, 3]] } }\n' + DERIVED.replace("clovertown-e5320",
                                                                              "grouped")
     + "cores = 8\npackages = 4\n",
     "cache l2 lists its groups of 4 cores: give l2 groups (or a shared_by)"),
    (DERIVED + "cores = 6\npackages = 4\n", "6 cannot be split into 4 equal groups"),
    # The catalogue's rules, word for word.
    (DERIVED + 'caches = { l2 = { size = "3MiB" } }\n', "not a power of two"),
    (DERIVED + 'caches = { l2 = { sise = "2MiB" } }\n', "cache l2: unknown key 'sise'"),
    (DERIVED + "core = 6\n", "unknown key 'core'"),
    (DERIVED + 'caches = { l2 = { groups = [[0, 1], [1, 2, 3]] } }\n', "do not partition"),
    (DERIVED + "caches = 3\n", "caches must be a table"),
    (DERIVED + 'clock = "fast"\n', "cannot read clock 'fast'"),
    # What only a user file can get wrong.
    ('[machines.mine]\nbase = "nosuch"\n', "base 'nosuch' is neither a catalogue machine"),
    ('[machines.mine]\nbase = "other"\n[machines.other]\nbase = "mine"\n',
     "the bases go round in a circle (mine -> other -> mine)"),
    ('[machines.niagara]\nbase = "niagara"\n', "'niagara' is a catalogue machine's name"),
    ('[machines."my machine"]\nbase = "niagara"\n', "may hold only letters"),
    (DERIVED, "has no machine 'other'; it has mine"),
    ("[machines.mine\n", "is not valid TOML"),
    ('[machine.mine]\nbase = "niagara"\n', "must hold only [machines.NAME] tables"),
])
def test_bad_user_machines_are_one_line_errors(tmp_path, body, message):
    name = "other" if message.startswith("has no machine") else "mine"
    assert message in _error(tmp_path, body, name)


def test_errors_name_the_file_and_match_the_catalogues(tmp_path):
    body = (DERIVED + 'caches = { l2 = { size = "3MiB" } }\n')
    user = _error(tmp_path, body)
    assert user.startswith(f"machine mine ({tmp_path / 'bad.toml'}): cache l2: size 3MiB")
    with pytest.raises(UserError) as catalogue:
        load_machine("clovertown-e5320", ["l2.size=3MiB"])
    assert user.split(": ", 1)[1] == str(catalogue.value).split(": ", 1)[1]


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(UserError, match="machine file .*nope.toml is missing; check the path"):
        load_machine(f"{tmp_path / 'nope.toml'}:x")


# ----------------------------------------------------------------------------- command line
def test_machines_command_shows_and_lists_user_machines(machines_file):
    one = run_cli("machines", f"{machines_file}:clover6", "--set", "l2.assoc=8")
    assert one.returncode == 0, one.stderr
    assert "l2: 2MiB 8-way" in one.stdout and "shared by [0-1] [2-3] [4-5]" in one.stdout
    listing = run_cli("machines", "--machines", str(machines_file))
    assert listing.returncode == 0, listing.stderr
    assert "niagara" in listing.stdout and "clover6-one-l2" in listing.stdout
    by_env = run_cli("machines", "tiny-one", env={"SCHEDLAB_MACHINES": str(machines_file)})
    assert by_env.returncode == 0 and "cores 1 at 1000 MHz" in by_env.stdout


@pytest.mark.parametrize("args, fragment", [
    (["machines", "nosuch"], "neither in"),
    (["run", "--workload", "memlat", "--machine", "nosuch"], "neither in"),
    (["boot", "--machine", "clover6", "--set", "l2.size=3MiB"], "not a power of two"),
])
def test_user_machine_errors_on_the_command_line(machines_file, args, fragment):
    proc = run_cli(*args, "--machines", str(machines_file))
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and fragment in last, proc.stderr
    assert "Traceback" not in proc.stderr
