"""The NUMA latency probe of bench/bench_hector_latency.py, without gem5.

The probe (bench/programs/numa_linechase.c) is built as the runner builds a user's C file
and run on this host with the host's physical memory split into made-up banks: it must
find a bank holding its pages through /proc/self/pagemap, and its chase that misses the
L1 must cost more per load than the one that hits. The bench's own parts (the banks it
passes, the table it compares with) are checked against the Hector model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import bench_hector_latency as bhl  # noqa: E402

from schedlab.guest.programs import build_user_program  # noqa: E402

GIB = 1 << 30


@pytest.fixture(scope="module")
def probe():
    return build_user_program(bhl.PROGRAM)


def _pagemap_gives_frames() -> bool:
    if os.geteuid() != 0:
        return False
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(id(object()) // 4096 * 8)
        return int.from_bytes(f.read(8), "little") & ((1 << 55) - 1) != 0


def test_probe_finds_a_home_bank_and_a_miss_costs_more_than_a_hit(probe):
    if not _pagemap_gives_frames():
        pytest.skip("/proc/self/pagemap gives no page frames here (needs root)")
    # Two made-up banks that cover every physical address below 1 TiB, on two nodes.
    banks = ["--bank", f"0,{64 * GIB:#x},0,0", "--bank", f"{64 * GIB:#x},{960 * GIB:#x},1,0"]
    out = subprocess.run([str(probe), "--alloc-cpu", "0", "--trials", "21", *banks],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    metrics = dict(line.split("=", 1) for line in out.stdout.split())
    assert metrics["home_bank"] in ("0", "1")
    assert 16 <= int(metrics["scanned_pages"]) <= 96 * 256
    assert metrics["local_cpu"] == "0"
    assert "station" not in " ".join(metrics)        # no other module on the home node
    assert metrics["remote_cpu"] == "0"
    for cls in ("local", "remote"):
        assert float(metrics[f"{cls}_miss_cycles"]) > float(metrics[f"{cls}_hit_cycles"]) > 0
        assert float(metrics[f"{cls}_load_cycles"]) == pytest.approx(
            float(metrics[f"{cls}_miss_cycles"]) - float(metrics[f"{cls}_hit_cycles"]),
            abs=0.011)


@pytest.mark.parametrize("args, message", [
    (["--alloc-cpu", "0"], "give --alloc-cpu and the machine's banks"),
    (["--alloc-cpu", "0", "--bank", "0,16,0,0", "--bank", "x", ], "--bank wants START,SIZE"),
    (["--alloc-cpu", "0", "--bank", "0,16,0,0", "--bank", "16,16,1,0", "--lines", "4"],
     "--lines must be 5..64"),
    (["--alloc-cpu", "0", "--bank", "0,16,0,0", "--bank", "16,16,1,0", "--scan-mib", "1"],
     "raise --scan-mib"),
    (["--frobnicate", "1"], "unknown option --frobnicate"),
])
def test_probe_refuses_bad_input_in_one_line(probe, args, message):
    if "--scan-mib" in args and not _pagemap_gives_frames():
        pytest.skip("/proc/self/pagemap gives no page frames here (needs root)")
    out = subprocess.run([str(probe), *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_bench_passes_every_modelled_bank_with_its_module_cpu():
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.machine import load_machine
    args = bhl.bank_args(16)
    specs = [args[i + 1] for i in range(0, len(args), 2)]
    assert args[::2] == ("--bank",) * 16
    plan = plan_from_dict(load_machine("hector", ["memory.delay.cycles=16"]).to_dict())
    for spec, bank in zip(specs, plan.memory.banks):
        start, size, node, cpu = (int(x, 0) for x in spec.split(","))
        assert (start, size, node) == (bank.start, bank.size, bank.node)
        assert cpu == bank.packages[0]              # one core per processor module
    # The probe's memory is first touched on a station other than the system's.
    assert bhl.ALLOC_CPU not in load_machine("hector").reserved_cores


def test_bench_compares_with_the_table_and_flags_misses_beyond_fifteen_percent():
    assert bhl.reference_cycles(0) == {"local": 19, "station": 29, "remote": 37}
    assert bhl.reference_cycles(64)["remote"] == 229
    rows = {r["class"]: r for r in bhl.compare(16, {"local": 21.0, "station": 34.0})}
    assert rows["local"]["within"] and rows["local"]["error"] == pytest.approx(2 / 19, abs=1e-4)
    assert not rows["station"]["within"]             # 17 % over 29
    assert not rows["remote"]["within"] and rows["remote"]["measured_cycles"] is None
    request = bhl.request(64)
    assert request.overrides == ("memory.delay.cycles=64",) and request.cpu == "timing"
    assert request.jobs[0].warmup > 0               # the set-up stays on the Atomic cores
