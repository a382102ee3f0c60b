"""run.py sweep: the grid, its requests, checkpoint reuse across cache sizes, and a real
3-point sweep on QEMU of a user machine, resumed."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import qemu_topology_problems, run_cli
from schedlab.backends.gem5.plan import plan_from_dict
from schedlab.campaigns.sweep import POLICY, Sweep, parse_settings
from schedlab.errors import UserError
from schedlab.machine import load_machine
from schedlab.runs import WorkloadRequest


def _sweep(settings, policies=None, machine="clovertown-e5320") -> Sweep:
    axes, fixed = parse_settings(settings, policies)
    return Sweep(name="t", machine=machine, axes=axes, fixed=fixed,
                 jobs=(WorkloadRequest("memlat", cpus="0"),), backend="gem5",
                 policy=None if policies and "," in policies else policies)


def test_grid_is_the_cartesian_product_in_the_order_given():
    s = _sweep(("l2.size=1MiB,2MiB,4MiB,8MiB", "l2.assoc=8,16", "clock=2GHz"))
    assert [a.key for a in s.axes] == ["l2.size", "l2.assoc"] and s.fixed == ("clock=2GHz",)
    points = s.points()
    assert len(points) == 8
    assert points[:3] == [{"l2.size": "1MiB", "l2.assoc": "8"},
                          {"l2.size": "1MiB", "l2.assoc": "16"},
                          {"l2.size": "2MiB", "l2.assoc": "8"}]
    requests = s.requests()
    assert requests[1].overrides == ("clock=2GHz", "l2.size=1MiB", "l2.assoc=16")
    assert requests[1].label == {"l2.size": "1MiB", "l2.assoc": "16"}
    assert load_machine(requests[-1].machine, requests[-1].overrides).cache("l2").sets == 8192


def test_a_sampled_sweep_carries_its_schedule_and_refuses_one_that_cannot_hold():
    import dataclasses
    s = dataclasses.replace(_sweep(("l2.size=1MiB,2MiB",)), sampling="smarts-dense")
    assert {r.sampling for r in s.requests()} == {"smarts-dense"}
    with pytest.raises(UserError, match=r"^sweep point l2.size=1MiB: --sampling 1000000,"
                                        r"20000,10000: memlat \(smoke\) has about 4.3 M"):
        dataclasses.replace(s, sampling="smarts-default").requests()


def test_policies_can_be_swept_too():
    s = _sweep(("l2.size=2MiB,4MiB",), "vanilla,no-affinity")
    assert [a.key for a in s.axes] == ["l2.size", POLICY]
    assert [(r.policy, r.label[POLICY]) for r in s.requests()][:2] == [
        ("vanilla", "vanilla"), ("no-affinity", "no-affinity")]
    assert {r.policy for r in _sweep(("l2.size=2MiB,4MiB",), "no-affinity").requests()} == {
        "no-affinity"}


def test_cache_sweeps_share_one_boot_checkpoint():
    # The checkpoint key holds the board's boot identity (cores, CPUID, clock, memory map),
    # not its caches: every point of a cache sweep restores the same checkpoint...
    def identities(settings):
        return {json.dumps(plan_from_dict(load_machine(r.machine, r.overrides).to_dict())
                           .boot_identity()) for r in _sweep(settings).requests()}
    assert len(identities(("l2.size=1MiB,2MiB,4MiB,8MiB", "l2.assoc=8,16",
                           "l2.latency=10cycles,20cycles", "l1d.size=16KiB,32KiB"))) == 1
    # ...and a clock sweep boots once per clock.
    assert len(identities(("clock=1GHz,2GHz,3GHz",))) == 3


@pytest.mark.parametrize("settings, policies, message", [
    ((), None, "nothing to sweep"),
    (("l2.size=2MiB",), None, "nothing to sweep"),
    (("l2.size",), None, "is not KEY=VALUE[,VALUE...]"),
    (("l2.size=1MiB,,2MiB",), None, "is not KEY=VALUE[,VALUE...]"),
    (("l2.size=1MiB,1MiB",), None, "repeats a value"),
    (("l2.size=1MiB,2MiB", "l2.size=4MiB"), None, "l2.size is given twice"),
    (("l2.size=2MiB",), "vanilla,vanilla", "distinct policy names"),
])
def test_bad_sweeps_are_one_line_errors(settings, policies, message):
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_settings(settings, policies)


def test_a_bad_point_is_named():
    with pytest.raises(UserError, match=r"sweep point l2.size=3MiB: .*not a power of two"):
        _sweep(("l2.size=2MiB,3MiB",)).requests()


@pytest.mark.parametrize("settings, fragment", [
    (("--set", "l2.size=2MiB,3MiB"), "sweep point l2.size=3MiB: machine clovertown-e5320: "
                                     "cache l2: size 3MiB"),
    (("--set", "l2.size=2MiB"), "nothing to sweep"),
    (("--set", "l9.size=1MiB,2MiB"), "cannot override unknown key 'l9.size'"),
])
def test_bad_sweeps_on_the_command_line_run_nothing(settings, fragment, results_dir):
    proc = run_cli("sweep", "--machine", "clovertown-e5320", "--workload", "memlat",
                   "--backend", "qemu", *settings, env={"SCHEDLAB_RESULTS": str(results_dir)})
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and fragment in last, proc.stderr
    assert not list(results_dir.glob("*/results.json"))


MACHINES = """
[machines.clover6]
base = "clovertown-e5320"
cores = 6
packages = 3
"""


def test_three_point_sweep_on_qemu_runs_resumes_and_plots(results_dir, tmp_path):
    machines = tmp_path / "mine.toml"
    machines.write_text(MACHINES)
    args = ("sweep", "--machines", str(machines), "--machine", "clover6", "--backend", "qemu",
            "--workload", "memlat", "--cpus", "5", "--reps", "2", "--jobs", "1",
            "--set", "l2.size=1MiB,2MiB,4MiB", "--set", "l2.assoc=8")
    env = {"SCHEDLAB_RESULTS": str(results_dir)}
    first = run_cli(*args, env=env, timeout=1200)
    assert first.returncode == 0, first.stderr
    assert "3 runs, 0 already done, 3 to run" in first.stderr
    table = pd.read_parquet(results_dir / "sweeps" / "clover6--l2.size.parquet")
    assert sorted(table["l2.size"].unique()) == ["1MiB", "2MiB", "4MiB"]
    assert table.groupby("l2.size")["job_rep"].count().tolist() == [2, 2, 2]
    assert table["ok"].all() and (table["machine"] == "clover6").all()
    assert (results_dir / "sweeps" / "clover6--l2.size.csv").is_file()
    assert (results_dir / "figures" / "clover6--l2.size.png").stat().st_size > 10_000
    for run_id in table["run_id"].unique():
        run_dir = results_dir / run_id
        spec = json.loads((run_dir / "spec.json").read_text())
        assert spec["machine"]["caches"][-1]["assoc"] == 8          # the fixed value
        assert qemu_topology_problems(run_dir) == []                # three L2 pairs, seen
    # The same sweep again: every point is found by its run id, nothing reruns; a metric
    # that is not there names the ones that are.
    again = run_cli(*args, "--metric", "nosuch", env=env, timeout=600)
    assert "3 runs, 3 already done, 0 to run" in again.stderr
    assert again.returncode == 1
    last = again.stderr.strip().splitlines()[-1]
    assert last.startswith("error: metric 'nosuch' is not in this sweep's results; choose "
                           "one of") and "wall_s" in last
