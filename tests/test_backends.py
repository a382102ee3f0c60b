"""The backend interface: both backends implement it, requests name backends and core
models by enums, and a backend refuses what it cannot run with one line."""

import pytest

from schedlab.backends.backend import (Backend, BackendName, CpuModel, backend_name,
                                       get_backend)
from schedlab.backends.gem5.plan import CPU_TYPES
from schedlab.errors import UserError
from schedlab.runs import RunRequest, WorkloadRequest, prepare

JOBS = (WorkloadRequest("memlat"),)


def test_both_backends_implement_the_interface():
    for name in BackendName:
        runner = get_backend(name)
        assert isinstance(runner, Backend) and runner.name is name
    assert get_backend("gem5").timing_model and not get_backend("qemu").timing_model


def test_requests_carry_enums_and_refuse_unknown_names():
    request = RunRequest(machine="clovertown-e5320", jobs=JOBS, backend="gem5", cpu="timing")
    assert request.backend is BackendName.GEM5 and request.cpu is CpuModel.TIMING
    assert request.backend == "gem5"          # a StrEnum: the spec and run id keep "gem5"
    assert tuple(CpuModel) == CPU_TYPES       # the gem5 script's own list
    with pytest.raises(UserError, match=r"^unknown backend 'kvm'; choose one of qemu, gem5$"):
        RunRequest(machine="clovertown-e5320", jobs=JOBS, backend="kvm")
    with pytest.raises(UserError, match=r"^unknown gem5 CPU 'minor'; choose one of atomic, "
                                        r"timing, o3$"):
        RunRequest(machine="clovertown-e5320", jobs=JOBS, backend="gem5", cpu="minor")
    assert backend_name("qemu") is BackendName.QEMU


@pytest.mark.parametrize("option,words", [
    ({"attribute_tasks": True}, "--attribute-tasks needs the gem5 backend"),
    ({"sampling": "smarts-dense"}, "--sampling needs the gem5 backend"),
    ({"warm_caches": 0.01}, "--warm-caches bypasses the caches while gem5 fast-forwards"),
])
def test_qemu_refuses_gem5_only_options(option, words):
    with pytest.raises(UserError, match=words):
        prepare(RunRequest(machine="clovertown-e5320", jobs=JOBS, **option),
                progress=lambda s: None, build=False)


def test_the_spec_s_backend_part_comes_from_the_backend():
    def spec(**kw):
        return prepare(RunRequest(machine="clovertown-e5320", jobs=JOBS, **kw),
                       progress=lambda s: None, build=False).spec
    qemu, gem5 = spec(), spec(backend="gem5")
    assert (qemu["cpu"], qemu["numa_from"], "fast_forward" in qemu) == (None, "firmware", False)
    assert (gem5["cpu"], gem5["numa_from"], gem5["fast_forward"]) == ("o3", None, True)
    assert "gem5_config" in gem5 and "gem5_config" not in qemu


def test_a_run_is_refused_when_the_tree_no_longer_makes_the_planned_one(monkeypatch):
    # The worker and a SLURM task resolve their request again before running it.
    from schedlab.runs import prepare_planned
    request = RunRequest(machine="clovertown-e5320", jobs=JOBS, backend="gem5")
    planned = prepare(request, progress=lambda s: None, build=False).run_id
    assert prepare_planned(request, planned, progress=lambda s: None,
                           build=False).run_id == planned
    from schedlab.backends.gem5 import binary
    monkeypatch.setattr(binary, "config_hash", lambda: "gem5-side code edited meanwhile")
    with pytest.raises(UserError, match=f"^the sources changed since the campaign was "
                                         f"planned: this run is now .*, not {planned}; "
                                         f"rerun the campaign$"):
        prepare_planned(request, planned, progress=lambda s: None, build=False)


def test_the_icount_guest_clock_is_qemu_s_and_part_of_the_run_s_identity():
    from schedlab.backends import qemu
    from schedlab.machine import load_machine

    def spec(**kw):
        return prepare(RunRequest(machine="clovertown-e5320", jobs=JOBS, **kw),
                       progress=lambda s: None, build=False).spec
    assert "guest_clock" not in spec()                 # the default keeps earlier run ids
    assert spec(guest_clock="icount")["guest_clock"] == "icount"
    cmd = qemu.command(load_machine("clovertown-e5320"), "k", "i", "", "c", icount=True)
    assert cmd[cmd.index("-icount") + 1] == "shift=auto,sleep=off"
    with pytest.raises(UserError, match="icount guest clock is QEMU's"):
        spec(guest_clock="icount", backend="gem5")
    with pytest.raises(UserError, match="^the guest clock must be 'host' or 'icount', not 'x'$"):
        spec(guest_clock="x")


def test_the_rate_rule_prices_a_miss_at_the_machine_s_memory_latency():
    # configs/machines.toml: the X5365's local memory latency is 100 ns, the X5660's 65 ns.
    def sysctl(machine, policy, **kw):
        return dict(prepare(RunRequest(machine=machine, jobs=JOBS, policy=policy, **kw),
                            progress=lambda s: None, build=False).spec["sysctl"])
    assert sysctl("clovertown-x5365", "region-unify")["kernel.sched_region_miss_ns"] == "100"
    assert sysctl("westmere-x5660", "region-balance")["kernel.sched_region_miss_ns"] == "65"
    # Left alone where the rule is off, and where the run sets it.
    assert "kernel.sched_region_miss_ns" not in sysctl("westmere-x5660", "vanilla")
    assert "kernel.sched_region_miss_ns" not in sysctl(
        "westmere-x5660", "region-balance", sysctl=(("kernel.sched_region_rate", "0"),))
    assert sysctl("westmere-x5660", "region-balance", sysctl=(
        ("kernel.sched_region_miss_ns", "80"),))["kernel.sched_region_miss_ns"] == "80"
