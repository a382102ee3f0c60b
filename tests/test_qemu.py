"""The QEMU backend end to end: topology mapping, a real boot, results, and failure modes."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from schedlab.backends import qemu
from schedlab.errors import UserError
from schedlab.machine import load_machine
from schedlab.backends.qemu import QEMU_BACKEND
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare

# Clovertown with one memory node per chip: 4 vCPUs in 2 NUMA nodes, an L2 per chip.
TWO_NODES = ("nodes=2", "memory.latency.remote=150ns")
# The console of a real run whose kernel met an INT3 it was patching in (see its README).
STRAY_INT3 = Path(__file__).parent / "data" / "qemu-stray-int3" / "console.log"


def test_topology_maps_llc_groups_to_sockets_and_nodes_to_numa():
    cmd = qemu.command(load_machine("clovertown-e5320", TWO_NODES), "k", "i", "", "c")
    assert cmd[cmd.index("-smp") + 1] == "4,sockets=2,cores=2,threads=1"
    numa = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-numa"]
    assert numa[:2] == ["node,nodeid=0,cpus=0-1,memdev=mem0", "node,nodeid=1,cpus=2-3,memdev=mem1"]
    assert numa[2].startswith("dist,src=0,dst=1,val=")
    westmere = qemu.command(load_machine("westmere-x5660"), "k", "i", "", "c")
    assert westmere[westmere.index("-smp") + 1] == "12,sockets=2,cores=6,threads=1"
    hector = qemu.layout(load_machine("hector"))
    assert (hector.sockets, len(hector.node_cpus)) == (16, 4)


def test_sharing_qemu_cannot_express_is_refused():
    with pytest.raises(UserError, match="use the gem5 backend"):
        qemu.layout(_interleaved())


def _interleaved():
    """A hypothetical machine whose L2 pairs cores 0+2 and 1+3 (not expressible as sockets)."""
    import dataclasses
    m = load_machine("clovertown-e5320")
    l2 = dataclasses.replace(m.cache("l2"), groups=((0, 2), (1, 3)))
    return dataclasses.replace(m, caches=tuple(l2 if c.name == "l2" else c for c in m.caches))


def test_boot_four_cpus_two_nodes_and_parse_a_workload(results_dir):
    sysctl = (("kernel.sched_rr_timeslice_ms", "20"), ("kernel.sched_rt_runtime_us", "900000"))
    request = RunRequest(machine="clovertown-e5320", overrides=TWO_NODES, sysctl=sysctl,
                         jobs=(WorkloadRequest("memlat", reps=2, cpus="3"),), timeout=600)
    run_dir = execute(prepare(request, progress=print), progress=print)
    res = json.loads((run_dir / "results.json").read_text())
    assert res["ok"], res["errors"]
    facts = res["facts"]
    assert facts["cpus.online"] == "0-3"
    assert (facts["node0.cpus"], facts["node1.cpus"]) == ("0-1", "2-3")
    assert "node2.cpus" not in facts
    # The scheduler's LLC domain spans the modelled L2 groups: {0,1} = 0x3, {2,3} = 0xc.
    assert facts["cpu0.domain0.span"].lstrip("0") == "3"
    assert facts["cpu2.domain0.span"].lstrip("0") == "c"
    # The default policy traces scheduler events into a per-CPU buffer sized for QEMU runs
    # (the kernel rounds it up to whole buffer pages).
    want = QEMU_BACKEND.trace_buffer_kb
    assert want <= int(facts["trace.buffer_size_kb"]) < 1.01 * want
    assert [j["rep"] for j in res["jobs"]] == [1, 2]
    # The sysctls as the kernel reads them back, every digit (not the first byte alone).
    assert {k: facts[f"sysctl.{k}"] for k, _ in sysctl} == dict(sysctl)
    # The runner marks its phases with the guest's clock, in the order it ran them.
    points = ["restored", "begin", "job.memlat.1", "job.memlat.2", "jobs-done", "end"]
    clock = [float(facts[f"uptime.{p}"]) for p in points]
    assert clock == sorted(clock) and clock[0] > 0
    # The topology is read once, before the ready marker (gem5: before the checkpoint).
    assert 0 < float(facts["uptime.topology-at-boot"]) <= clock[0]
    memlat = res["jobs"][0]["metrics"]
    assert memlat["accesses"] == 1_000_000 and memlat["accesses_per_sec"] > 0
    for name in ("spec.json", "machine.json", "console.log", "command.txt", "guest-spec.sh"):
        assert (run_dir / name).is_file()
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec["kernel"] == res["hashes"]["kernel"] and spec["machine"]["cores"] == 4
    # The guest's generator was reseeded from the run's seed before anything ran, and a
    # freshly executed program's layout reported.
    assert facts["random.seed"] == "0" and int(facts["random.mmap_probe"], 16) > 0
    # The built files the run booted and ran, by their own hashes.
    prepared = prepare(request, progress=print)
    from schedlab.runs import workload_artefacts
    assert res["artefacts"] == {**prepared.kernel.artefacts(), **prepared.image.artefacts(),
                                **workload_artefacts(prepared)}
    assert set(res["artefacts"]) == {"vmlinux", "bzImage", "initramfs", "workloads"}
    # The same spec is the same run: executing it again reuses the results; another seed
    # is another run.
    assert prepared.run_id == run_dir.name
    assert execute(prepared, progress=print) == run_dir
    import dataclasses
    assert prepare(dataclasses.replace(request, seed=1), progress=print).run_id != run_dir.name


def test_guest_without_ready_marker_times_out_cleanly(results_dir):
    # The initramfs's sleep stands in for an init that hangs before the runner starts.
    request = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                         boot_args=("rdinit=/bin/sleep", "--", "600"), ready_timeout=20)
    started = time.monotonic()
    with pytest.raises(UserError, match="no ready marker within 20 s"):
        execute(prepare(request, progress=print), progress=print)
    assert time.monotonic() - started < 120
    assert not any(results_dir.glob("*/results.json"))  # nothing half-written is published
    assert not results_dir.exists() or not [p for p in results_dir.iterdir()
                                            if not p.name.startswith(".")]


def test_guest_that_dies_before_ready_is_reported(results_dir):
    request = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                         boot_args=("rdinit=/nonexistent", "init=/nonexistent"),
                         ready_timeout=120)
    with pytest.raises(UserError, match="panicked.*init /nonexistent failed") as failed:
        execute(prepare(request, progress=print), progress=print)
    # The console it names outlives the staging directory, which the failure removed.
    console = Path(re.search(r"\(console: (\S+)\)", str(failed.value)).group(1))
    assert console.is_file() and "Kernel panic" in console.read_text(errors="replace")


def test_user_program_runs_like_a_workload(results_dir, tmp_path):
    source = tmp_path / "hello.c"
    source.write_text('#include <stdio.h>\nint main(void) { printf("answer=42\\n"); return 0; }\n')
    request = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest(str(source)),))
    res = json.loads((execute(prepare(request, progress=print), progress=print)
                      / "results.json").read_text())
    assert res["ok"], res["errors"]
    assert res["jobs"][0]["metrics"] == {"answer": 42}


def test_a_stray_int3_is_named_and_told_from_other_panics(tmp_path):
    # A stand-in for QEMU that writes the real console of a guest that died so, and exits as
    # QEMU does after a panic (-no-reboot).
    console = tmp_path / "console.log"
    replay = [sys.executable, "-c",
              f"import shutil; shutil.copyfile({str(STRAY_INT3)!r}, {str(console)!r})"]
    with pytest.raises(qemu.StrayBreakpoint, match="INT3 while it patched its own code"):
        qemu.boot(replay, console, ready_timeout=60, timeout=60, nonce="c42a25582b08bddb")
    # The same panic without the INT3 oops is another failure, and not retried.
    other = tmp_path / "other.log"
    other.write_text(STRAY_INT3.read_text().replace("int3: 0000", "general protection: 0000"))
    replay[-1] = f"import shutil; shutil.copyfile({str(other)!r}, {str(console)!r})"
    with pytest.raises(UserError, match="kernel panicked .*: Kernel panic - not syncing") as e:
        qemu.boot(replay, console, ready_timeout=60, timeout=60, nonce="c42a25582b08bddb")
    assert not isinstance(e.value, qemu.StrayBreakpoint)


def test_a_run_lost_to_a_stray_int3_boots_again_once_and_says_so(results_dir, monkeypatch):
    real_boot, calls = qemu.boot, []

    def first_boot_dies(cmd, console, *args):
        calls.append(cmd)
        if len(calls) == 1:
            console.write_text(STRAY_INT3.read_text())
            raise qemu.StrayBreakpoint(f"the guest kernel met an INT3 (console: {console})")
        return real_boot(cmd, console, *args)

    monkeypatch.setattr(qemu, "boot", first_boot_dies)
    request = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                         timeout=600)
    run_dir = execute(prepare(request, progress=print), progress=print)
    res = json.loads((run_dir / "results.json").read_text())
    assert res["ok"], res["errors"]
    assert len(calls) == 2
    lost = res["backend"]["boots_lost_to_stray_int3"]
    assert len(lost) == 1 and "int3: 0000" in Path(lost[0]).read_text()

    # A second stray INT3 in the same run fails it: the retry is once.
    def always_dies(cmd, console, *args):
        console.write_text(STRAY_INT3.read_text())
        raise qemu.StrayBreakpoint(f"the guest kernel met an INT3 (console: {console})")

    monkeypatch.setattr(qemu, "boot", always_dies)
    again = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest("memlat"),),
                       timeout=600, seed=1)
    with pytest.raises(UserError, match="met an INT3"):
        execute(prepare(again, progress=print), progress=print)
    assert not (results_dir / prepare(again, progress=print).run_id).exists()
