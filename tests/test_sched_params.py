"""Host side of the scheduler patches: NUMA boot parameters, policies.toml, the patch series."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from schedlab.guest.kernel import series

from schedlab.guest import numa as K
from schedlab.guest import policies
from schedlab.errors import UserError

PATCHES = Path(__file__).resolve().parent.parent / "kernel-patches"


def test_renders_hector_and_westmere():
    hector = [list(range(4 * s, 4 * s + 4)) for s in range(4)]
    args = K.numa_boot_args(hector, [64] * 4, [[10 if i == j else 30 for j in range(4)]
                                                 for i in range(4)])
    assert args[1] == "numa_emu_cpus=0-3:4-7:8-11:12-15"
    assert args[0].startswith("numa=fake=4:10,30,30,30,30,10,")
    westmere = K.numa_boot_args([list(range(6)), list(range(6, 12))])
    assert westmere == ["numa=fake=2:10,20,20,10", "numa_emu_cpus=0-5:6-11"]
    assert K.numa_boot_args([[0, 1, 2, 3]]) == []


@pytest.mark.parametrize("nodes", [
    [[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0], [1], [2], [3]], [list(range(12)), [12, 14, 15]],
])
def test_render_then_parse_round_trips(nodes):
    layout = K.parse_numa_boot_args(K.numa_boot_args(nodes))
    assert [list(n) for n in layout.nodes] == [sorted(n) for n in nodes]
    assert all(layout.distances[i][i] == 10 for i in range(len(nodes)))


@pytest.mark.parametrize("nodes, mem, dist, message", [
    ([[0, 1], [1, 2]], None, None, "more than one"),
    ([[0, 1], []], None, None, "no CPUs"),
    ([[0], [1]], [64, 128], None, "unequal"),
    ([[0], [1]], [16, 16], None, "minimum"),
    ([[0], [1]], None, [[10, 20], [20, 11]], "must be 10"),
    ([[0], [1]], None, [[10, 10], [10, 10]], "11..255"),
    ([[0], [1]], None, [[10, 20], [30, 10]], "symmetric"),
    ([[0], [1]], None, [[10, 20]], "2 x 2"),
])
def test_bad_layouts_are_rejected_in_one_line(nodes, mem, dist, message):
    with pytest.raises(UserError, match=message) as e:
        K.numa_boot_args(nodes, mem, dist)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("args, message", [
    (["numa_emu_cpus=0-1:2-3"], "needs numa=fake"),
    (["numa=fake=2:10,20,20,10", "numa_emu_cpus=0-1:x"], "bad CPU list"),
    (["numa=fake=3:10,20,20,10", "numa_emu_cpus=0-1:2-3"], "makes 3"),
    (["numa=fake=2:10,20,20", "numa_emu_cpus=0-1:2-3"], "need 4"),
    (["numa=fake=2", "numa_emu_cpus=0-1:2-3"], "equidistant"),
    (["numa=fake=2:10,20,20,10", "numa_emu_cpus=3-1:0"], "end before start"),
])
def test_parser_rejects_what_the_kernel_would(args, message):
    with pytest.raises(UserError, match=message):
        K.parse_numa_boot_args(args)


def test_cpulist_format():
    assert K.format_cpulist([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert K.parse_cpulist("0-2,5,7-8") == (0, 1, 2, 5, 7, 8)


def test_policies_file_is_valid_and_covers_the_studies():
    p = policies.load_policies()
    assert {"vanilla", "task-affinity", "task-affinity-off", "no-affinity",
            "quantum-2ms", "quantum-10ms", "quantum-200ms"} <= set(p)
    assert p["task-affinity"]["sysctl"]["kernel.sched_rt_task_affinity"] == 1
    assert "--declare-affinity" in p["task-affinity"]["workload_args"]["mixer"]
    assert p["no-affinity"]["sysctl"]["kernel.sched_cache_affinity"] == 0
    for q in (2, 10, 200):
        t = p[f"quantum-{q}ms"]
        assert t["sysctl"]["kernel.sched_rr_timeslice_ms"] == q
        assert t["files"]["/sys/kernel/debug/sched/min_granularity_ns"] == str(q * 1_000_000)
    # Every policy pins both switches, so no run depends on a kernel default.
    for name, t in p.items():
        assert {"kernel.sched_cache_affinity", "kernel.sched_rt_task_affinity"} <= set(
            t.get("sysctl", {})), name
    # Study 3's policies, with the names schedlab.campaigns.lee uses, make workloads join.
    from schedlab.campaigns import lee
    used = {r.policy for e in lee.EXPERIMENTS for r in e.matrix("smoke", "qemu")}
    assert used - {"vanilla"} == {"region-balance", "region-unify", "region-confine",
                                  "region-partition"}
    for name, mode in (("region-balance", 1), ("region-unify", 2), ("region-confine", 3),
                       ("region-partition", 3)):
        assert p[name]["sysctl"]["kernel.sched_regions"] == 1, name
        assert p[name]["sysctl"]["kernel.sched_region_policy"] == mode, name
        # The rate rule (kernel-patches 0031) is part of every region policy, and its moves'
        # costs are traced.
        assert p[name]["sysctl"]["kernel.sched_region_rate"] == 1, name
        assert "sched:sched_region_move_cost" in p[name]["trace_events"], name
        assert p[name]["regions"]["background"] == "join", name
    assert p["region-partition"]["regions"]["jobs"] == "favour"
    assert p["region-confine"]["regions"]["jobs"] == "join"
    with pytest.raises(UserError, match="unknown policy"):
        policies.policy("nonsense")


def test_policy_validation_catches_mistakes(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('[policy.x]\nsummary = "x"\nsysctl = { "kernel/x" = 1 }\n')
    with pytest.raises(UserError, match="dotted"):
        policies.load_policies(bad)
    bad.write_text('[policy.x]\nsummary = "x"\nworkload_arg = ["--y"]\n')
    with pytest.raises(UserError, match="unknown key"):
        policies.load_policies(bad)
    for regions in ('{ jobs = "yes" }', '{ background = "favour" }', '{ job = "join" }'):
        bad.write_text(f'[policy.x]\nsummary = "x"\nregions = {regions}\n')
        with pytest.raises(UserError, match="'regions'"):
            policies.load_policies(bad)


def _series() -> list[str]:
    return [p.name for p in series()]


def test_series_lists_signed_linux_style_patches():
    names = _series()
    assert len(names) >= 3
    for name in names:
        text = (PATCHES / name).read_text()
        assert re.search(r"^Subject: \[PATCH[^\]]*\] [a-z0-9/_]+: [A-Z]", text, re.M), name
        assert re.search(r"^Signed-off-by: .+ <.+@.+>$", text, re.M), name


def test_series_applies_to_the_pinned_source(tmp_path):
    from schedlab.guest import kernel

    tarball, _ = kernel.source_tarball()
    # Only the files the patches touch are extracted: applying must not need the whole tree.
    touched, created = set(), set()
    for name in _series():
        text = (PATCHES / name).read_text()
        touched |= set(re.findall(r"^\+\+\+ b/(\S+)", text, re.M))
        # Files a patch creates ("--- /dev/null") are not in the tarball.
        created |= set(re.findall(r"^--- /dev/null\n\+\+\+ b/(\S+)", text, re.M))
    touched -= created
    subprocess.run(["tar", "xf", str(tarball), "-C", str(tmp_path), "--strip-components=1",
                    "--wildcards", *(f"*/{f}" for f in sorted(touched))], check=True, timeout=300)
    for name in _series():
        r = subprocess.run(["patch", "-p1", "--dry-run", "-s", "-i", str(PATCHES / name)],
                           cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, f"{name}: {r.stdout}{r.stderr}"
        subprocess.run(["patch", "-p1", "-s", "-i", str(PATCHES / name)], cwd=tmp_path,
                       check=True)


def test_config_fragment_names_the_patch_options():
    frag = (PATCHES / "sched.config").read_text()
    assert "CONFIG_SCHED_RT_TASK_AFFINITY=y" in frag
    patches = "".join((PATCHES / n).read_text() for n in _series())
    assert "config SCHED_RT_TASK_AFFINITY" in patches
