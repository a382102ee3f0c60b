"""gem5 integration: boot 2-core models to a checkpoint, restore into Timing and O3.

Needs GEM5 (a gem5 v24.0 build/X86/gem5.fast) and the pinned Linux source; skipped
otherwise with the reason printed. The guest is disk-images/gem5-selftest/init.c, a minimal
PID 1 built into the kernel's initramfs, so these tests check the gem5 backend on its own:
- the guest sees the modelled LLC groups (packages, core siblings, scheduler domains);
- the boot checkpoint is cached (a second request returns at once);
- restoring into Timing and O3 runs a small loop between m5 workbegin/workend, the stats
  of that region parse, and each busy core's IPC lies in (0, issue width].

Cost: about 5 minutes host per boot and 1-2 minutes per restore on this project's hosts.
Machines: SCHEDLAB_GEM5_TEST_MACHINES (comma-separated), default the Clovertown MUP (one
L2 shared by both cores) and UMP (one L2 per core, which gem5's default CPUID could not
show: it reports every core in package 0).
"""

import functools
import gzip
import os
import re
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not os.environ.get("GEM5"),
                       reason="GEM5 not set: export GEM5=/path/to/gem5/build/X86/gem5.fast "
                              "(gem5 v24.0) to run the gem5 integration tests"),
    pytest.mark.timeout(3600),
]

MACHINES = os.environ.get("SCHEDLAB_GEM5_TEST_MACHINES",
                          "clovertown-e5320-mup,clovertown-e5320-ump").split(",")


@functools.lru_cache
def _guest(tick_hz: int):
    from schedlab.backends.gem5.selftest import build_guest_kernel
    return build_guest_kernel(progress=print, tick_hz=tick_hz)


def guest_for(machine: dict):
    """The self-test guest's kernel at the machine's tick rate (Hector's is 100 Hz)."""
    from schedlab.machine import tick_hz_of
    return _guest(tick_hz_of(machine))


def _topology(console: str) -> dict[int, dict]:
    out = {}
    for m in re.finditer(r"GUEST-TOPOLOGY cpu=(\d+) package=(\S+) siblings=(\S+) domains=(\S*)",
                         console):
        out[int(m.group(1))] = {"package": m.group(2), "siblings": m.group(3),
                                "domains": m.group(4)}
    return out


@pytest.mark.parametrize("name", MACHINES)
def test_boot_checkpoint_and_guest_topology(name):
    from schedlab.backends.gem5 import checkpoint, process
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.machine import format_cpus, load_machine
    machine = load_machine(name).to_dict()
    plan = plan_from_dict(machine)
    guest = guest_for(machine)
    cpt, meta = checkpoint.ensure_checkpoint(machine, plan, guest, progress=print)
    assert (cpt / "m5.cpt").is_file()
    console = (cpt.parent / "boot" / process.CONSOLE).read_text(errors="replace")
    topo = _topology(console)
    # gem5's TSCs are in step (tsc=reliable): the guest keeps the TSC as its clock and
    # times in nanoseconds, not jiffies; and the TSC runs at the catalogue's clock
    # (tsc_early_khz), which gem5's PIT measures only roughly.
    assert "Switched to clocksource tsc" in console, console[-2000:]
    mhz = f"{plan.clock_hz // 1000 // 1000}.{plan.clock_hz // 1000 % 1000:03d}"
    assert (f"Detected {mhz} MHz TSC" in console
            or f"Detected {mhz} MHz processor" in console), console[:3000]
    assert sorted(topo) == list(range(plan.num_cores)), console[-2000:]
    for group in plan.guest_packages():
        for cpu in group:
            assert topo[cpu]["siblings"] == format_cpus(group)
            assert topo[cpu]["package"] == str(plan.cores[cpu].guest_physical_id)
        # Cores sharing an LLC get a multi-core (MC) scheduling domain; alone, none.
        if len(group) > 1:
            assert topo[group[0]]["domains"].split(",")[0] == "MC"
    if len(plan.guest_packages()) > 1:
        assert all("DIE" in t["domains"] or "PKG" in t["domains"] for t in topo.values())

    # Cached: a second request returns the same checkpoint without booting.
    t0 = time.monotonic()
    again, _ = checkpoint.ensure_checkpoint(machine, plan, guest, progress=print)
    assert again == cpt and time.monotonic() - t0 < 30


@pytest.mark.parametrize("cpu", ["timing", "o3"])
def test_restore_and_run_roi(cpu, tmp_path):
    from schedlab.backends.gem5 import checkpoint
    from schedlab.backends.gem5 import run as g5run
    from schedlab.backends.gem5.stats import core_summary
    from schedlab.machine import load_machine
    from schedlab.backends.gem5.plan import plan_from_dict
    name = MACHINES[0]
    machine = load_machine(name).to_dict()
    plan = plan_from_dict(machine)
    job = g5run.Gem5Job(machine=machine, plan=plan, cpu=cpu, kernel=guest_for(machine),
                        kernel_args=tuple(checkpoint.run_kernel_args(machine, plan)),
                        readfile="loop 200000\n", timeout=3000)
    result = g5run.run(job, tmp_path / "run", progress=print)
    assert "GUEST-SPEC read loops=200000" in result["console"]
    assert "GUEST-DONE loops=200000" in result["console"]
    roi = [d for d in result["stats"] if d["schedlab.roi"]]
    assert len(roi) == 1
    cores = core_summary(roi[0])
    busy = max(cores.values(), key=lambda c: c.get("insts", 0))
    width = 1 if cpu == "timing" else machine["pipeline"]["width"]
    assert busy["insts"] > 200000
    assert 0 < busy["ipc"] <= width
    for f in ("gem5.json", "stats.json", "console.log", "gem5/gem5.stdout"):
        assert (tmp_path / "run" / f).exists()
    # keep a copy of real gem5 output for the parser's offline test fixture
    fixture = Path(__file__).parent / "data" / "gem5" / f"stats-{name}-{cpu}.txt.gz"
    if os.environ.get("SCHEDLAB_UPDATE_FIXTURES"):
        with gzip.open(fixture, "wb") as f:
            f.write((tmp_path / "run" / "gem5" / "stats.txt").read_bytes())
