"""The software mixer natively (without the task-affinity declaration) and its host-side
analysis."""

from __future__ import annotations

import math
import os
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from schedlab.analysis import mixer
from schedlab.guest import programs, workloads
from schedlab.errors import UserError


@pytest.fixture(scope="module")
def exe() -> Path:
    return programs.binary("mixer")


def run(exe: Path, out: Path, *args: str,
        timeout: float = 60) -> tuple[subprocess.CompletedProcess, dict]:
    r = subprocess.run([str(exe), "--out", str(out), "--sched", "other", *args],
                       capture_output=True, text=True, timeout=timeout)
    return r, workloads.parse_output(r.stdout)


@pytest.fixture(scope="module")
def small_run(exe, tmp_path_factory):
    out = tmp_path_factory.mktemp("mixer")
    r, values = run(exe, out, "--samples", "4000", "--packet", "512")
    assert r.returncode == 0, r.stderr
    return out, values


def test_native_run_checks_itself_and_writes_every_file(small_run):
    out, v = small_run
    assert v["samples"] == 4000 and v["packet_bytes"] == 512
    assert v["verified"] == 1 and v["monotonic"] == 1 and v["declared_affinity"] == 0
    assert v["getcpu"] in ("rseq", "vdso")     # which source sched_getcpu() uses here
    for name in mixer.FILES:
        assert (out / name).stat().st_size > 0, name


def test_host_analysis_agrees_with_the_program(small_run):
    out, v = small_run
    run_ = mixer.load(out)
    assert run_.samples == 4000 and len(run_.production_ns) == 3999
    s = mixer.summarise(run_.production_ns)
    # Two independent computations (C in the guest, Python here) of the same statistics.
    assert math.isclose(s.mean, v["mean_ns"], rel_tol=1e-6, abs_tol=0.1)
    assert math.isclose(s.sd, v["sd_ns"], rel_tol=1e-6, abs_tol=0.1)
    assert math.isclose(s.rho, v["rho_ns"], rel_tol=1e-6, abs_tol=0.2)
    assert s.minimum == v["min_ns"] and s.maximum == v["max_ns"]
    for task in mixer.TASKS:
        assert mixer.cpu_changes(run_.cpu_map[task]) == v[f"{task}_cpu_changes"], task
    # Timestamps: the production times add up to the span between first and last sample.
    assert sum(run_.production_ns) == v["total_ns"]


def _map_bytes_bound(samples: int, cpus: int = 62) -> int:
    """What cpus.csv and handover.csv may take each, whatever the migrations: at most one
    symbol per task and sample -- a character for CPUs 0-61, (N) beyond -- plus a row of at
    most 4000 characters' overhead (about 30 bytes) and the header."""
    symbol = 1 if cpus <= 62 else len(f"({cpus - 1})")
    per_task = samples * symbol + (samples * symbol // 4000 + 1) * 30
    return len(mixer.TASKS) * per_task + 100


def test_output_is_compact_at_paper_size(exe, tmp_path):
    # 150 000 samples is the paper's size. Whatever the host's scheduler does with the
    # threads, the migration maps take at most a byte per task and sample (the worst case
    # is test_output_stays_compact_when_every_sample_migrates); production.csv is a line
    # per sample and exec.csv at most 10 000 rows.
    samples = 150_000
    r, v = run(exe, tmp_path, "--samples", str(samples), "--packet", "64", "--no-verify",
               timeout=120)
    assert r.returncode == 0, r.stderr
    size = {f: (tmp_path / f).stat().st_size for f in mixer.FILES}
    host_cpus = os.cpu_count() or 1
    assert size["cpus.csv"] <= _map_bytes_bound(samples, host_cpus), size
    assert size["handover.csv"] <= _map_bytes_bound(samples, host_cpus), size
    assert len((tmp_path / "exec.csv").read_text().splitlines()) <= 10_001
    assert size["exec.csv"] <= 10_001 * 8 * 11, size        # 8 columns of at most 10 digits
    run_ = mixer.load(tmp_path)
    assert len(run_.production_ns) == samples - 1
    # Each map grows with the CPU changes it records, not with the samples.
    changes = sum(v[f"{t}_cpu_changes"] for t in mixer.TASKS)
    # (a change starts a run: its symbol and {count}, at most 14 characters)
    assert size["cpus.csv"] <= 30 + len(mixer.TASKS) * 40 + 14 * changes, (size, changes)


# --------------------------------------------------------------------------------------
# The worst case, made on purpose: the mixer built with a sched_getcpu() whose answer is
# a fixed function of how often the calling thread has asked. Each task asks twice per
# sample (input in hand, output handed over), so sample n of every task was taken on
# fake_cpu(2n) and handed over on fake_cpu(2n + 1) -- an oracle for the whole round trip
# through the mixer's writer and this package's reader.
FAKE_GETCPU_C = r"""
#include <stdint.h>
static __thread uint32_t calls;
int schedlab_fake_getcpu(void)
{
	uint32_t x = calls++ * 0x9E3779B1u;

	x ^= x >> 15;
	x *= 0x85EBCA6Bu;
	x ^= x >> 13;
	return (int)(x % FAKE_CPUS);
}
"""


def fake_cpu(k: int, cpus: int) -> int:
    x = (k * 0x9E3779B1) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    return x % cpus


@pytest.fixture(scope="module")
def fake_build(tmp_path_factory):
    """mixer.c built natively with the stand-in sched_getcpu, per number of fake CPUs."""
    built = {}

    def build(cpus: int) -> Path:
        if cpus not in built:
            d = tmp_path_factory.mktemp(f"fake{cpus}")
            (d / "fake_getcpu.c").write_text(FAKE_GETCPU_C)
            cmd = programs.guest_compile_command(
                [programs.WORKLOADS / "mixer" / "mixer.c", d / "fake_getcpu.c"], d / "mixer",
                ["-pthread"], [*programs.CFLAGS, "-Dsched_getcpu=schedlab_fake_getcpu",
                               f"-DFAKE_CPUS={cpus}"])
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            built[cpus] = d / "mixer"
        return built[cpus]
    return build


@pytest.mark.parametrize("cpus", [2, 16, 80])   # 80: CPUs past the one-character symbols
def test_maps_round_trip_whatever_the_migrations(fake_build, tmp_path, cpus):
    samples = 2000
    r, v = run(fake_build(cpus), tmp_path, "--samples", str(samples), "--packet", "64")
    assert r.returncode == 0, r.stderr
    run_ = mixer.load(tmp_path)
    taken = [fake_cpu(2 * n, cpus) for n in range(samples)]
    handed = [fake_cpu(2 * n + 1, cpus) for n in range(samples)]
    changes = sum(1 for a, b in zip(taken, taken[1:]) if a != b)
    assert changes > samples * (1 - 1 / cpus) * 0.9          # it really migrates
    for task in mixer.TASKS:
        assert run_.cpu_map[task] == taken, task
        assert run_.cpu_out(task) == handed, task
        assert v[f"{task}_cpu_changes"] == changes                # the program's own count
        assert mixer.cpu_changes(run_.cpu_map[task]) == changes


def test_output_stays_compact_when_every_sample_migrates(fake_build, tmp_path):
    # Paper size, 16 CPUs: nearly every sample of every task is taken on another CPU than
    # the one before, and handed over on yet another.
    samples = 150_000
    r, _ = run(fake_build(16), tmp_path, "--samples", str(samples), "--packet", "64",
               "--no-verify", timeout=120)
    assert r.returncode == 0, r.stderr
    for name in ("cpus.csv", "handover.csv"):
        size = (tmp_path / name).stat().st_size
        assert size <= _map_bytes_bound(samples), (name, size)
        assert size >= len(mixer.TASKS) * samples * 0.9           # the worst case it is
    run_ = mixer.load(tmp_path)
    assert run_.cpu_map["mixer2"][-1] == fake_cpu(2 * (samples - 1), 16)
    assert run_.cpu_out("wave0")[12345] == fake_cpu(2 * 12345 + 1, 16)


def test_result_does_not_depend_on_the_schedule(exe, tmp_path):
    # The pipeline's output checksum is fixed by the data alone: the same with FIFO or not,
    # any number of samples' worth of hand-overs notwithstanding.
    _, a = run(exe, tmp_path / "a", "--samples", "500", "--packet", "256")
    _, b = run(exe, tmp_path / "b", "--samples", "500", "--packet", "256")
    _, c = run(exe, tmp_path / "c", "--samples", "500", "--packet", "128")
    assert a["checksum"] == b["checksum"] != c["checksum"]


@pytest.mark.parametrize("args", [
    ["--samples", "1"], ["--samples", "ten"], ["--packet", "3"], ["--sched", "rr"],
    ["--prio", "100"], ["--frobnicate"], ["--samples"],
])
def test_bad_arguments_give_one_line(exe, tmp_path, args):
    r = subprocess.run([str(exe), "--out", str(tmp_path), *args], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_declaring_affinity_fails_cleanly_without_the_kernel_patch(exe, tmp_path):
    # This host runs a stock kernel: the prctl is unknown and the mixer must not measure
    # silently without its affinity graph.
    r, _ = run(exe, tmp_path, "--samples", "100", "--declare-affinity")
    assert r.returncode == 1
    assert "cannot declare its producers" in r.stderr and len(r.stderr.splitlines()) == 1


def test_summary_matches_statistics_module():
    xs = [1200, 1350, 990, 40000, 1100, 1250, 1175]
    s = mixer.summarise(xs)
    assert math.isclose(s.mean, statistics.fmean(xs))
    assert math.isclose(s.sd, statistics.stdev(xs))
    assert math.isclose(s.rho, statistics.fmean(xs) + 2 * statistics.stdev(xs))
    assert s.samples == len(xs) + 1


def test_ecdf():
    x, y = mixer.ecdf([5, 1, 3, 3])
    assert x == [1, 3, 5] and y == [0.25, 0.75, 1.0]


def _write(d: Path, runs: list[str], topology: str, samples: int) -> None:
    (d / "cpus.csv").write_text("task,first,last,cpu\n" + "".join(r + "\n" for r in runs))
    (d / "topology.csv").write_text(topology)
    (d / "production.csv").write_text("production_ns\n" + "10\n" * (samples - 1))
    (d / "exec.csv").write_text("sample," + ",".join(mixer.TASKS) + "\n0" + ",5" * 7 + "\n")
    (d / "handover.csv").write_text("task,sample,cpu\n")


TOPO = "cpu,llc_cpus,source\n0,\"0-1\",cache\n1,\"0-1\",cache\n2,\"2-3\",cache\n3,\"2-3\",cache\n"


def test_affine_fraction_and_migrations_map(tmp_path):
    # 10 samples, LLCs {0,1} and {2,3}. mixer0 shares wave0/wave1's cache for samples 0-5
    # only; mixer1 (CPU 0) never shares wave2/wave3's (CPUs 2, 3); mixer2 (CPU 0) shares
    # mixer0's cache for 0-5 and mixer1's for 6-9.
    runs = ["wave0,0,9,0", "wave1,0,9,1", "wave2,0,9,2", "wave3,0,9,3",
            "mixer0,0,5,1", "mixer0,6,9,2", "mixer1,0,9,0", "mixer2,0,9,0"]
    _write(tmp_path, runs, TOPO, 10)
    r = mixer.load(tmp_path)
    assert mixer.affine_fraction(r, "mixer0") == 0.6
    assert mixer.affine_fraction(r, "mixer1") == 0.0
    assert mixer.affine_fraction(r, "mixer2") == 1.0
    assert mixer.report(r)["tasks"]["mixer0"]["cpu_changes"] == 1
    # The machine's own LLC groups override the guest's report: one shared cache => 100 %.
    r_one = mixer.load(tmp_path, llc_groups=[[0, 1, 2, 3]])
    assert mixer.affine_fraction(r_one, "mixer1") == 1.0
    dense = tmp_path / "map.csv"
    mixer.write_migrations_map(r, dense)
    rows = dense.read_text().splitlines()
    assert rows[0] == "sample," + ",".join(mixer.TASKS) and rows[7] == "6,0,1,2,3,2,0,0"


@pytest.mark.parametrize("runs, what", [
    (["wave0,0,4,0"], "tasks"),                                                  # tasks missing
    (["wave0,1,9,0"] + [f"{t},0,9,0" for t in mixer.TASKS[1:]], "does not follow"),
    (["wave0,0,8,0"] + [f"{t},0,9,0" for t in mixer.TASKS[1:]], "different sample counts"),
])
def test_broken_migrations_map_is_rejected(tmp_path, runs, what):
    _write(tmp_path, runs, TOPO, 10)
    with pytest.raises(UserError, match=what):
        mixer.load(tmp_path)


def test_decode_cpus():
    assert mixer.decode_cpus("0{3}1a(70)Z{2}") == [0, 0, 0, 1, 10, 70, 61, 61]
    assert mixer.decode_cpus("(-1)") == [-1]                 # sched_getcpu() failed
    assert mixer.decode_cpus(".{2}3", same_allowed=True) == [None, None, 3]
    for bad in ("0{0}", "0{", "{3}", "0,1", "(x)", ".", "0{2"):
        with pytest.raises(ValueError):
            mixer.decode_cpus(bad)


def _write_coded(d: Path, rows: list[str], handover: list[str], samples: int) -> None:
    _write(d, [], TOPO, samples)
    (d / "cpus.csv").write_text("task,first,last,cpus\n" + "".join(r + "\n" for r in rows))
    (d / "handover.csv").write_text("task,first,last,cpus\n"
                                    + "".join(r + "\n" for r in handover))


def test_coded_maps_read_as_the_runs_they_code(tmp_path):
    # test_affine_fraction_and_migrations_map's maps, in today's code; mixer0's and
    # mixer1's rows split in two. mixer0 hands sample 2 over on CPU 3, wave3 sample 9 on 0.
    rows = ["wave0,0,9,0{10}", "wave1,0,9,1{10}", "wave2,0,9,2{10}", "wave3,0,9,3{10}",
            "mixer0,0,3,1111", "mixer0,4,9,11222{1}2", "mixer1,0,4,0{5}", "mixer1,5,9,0{5}",
            "mixer2,0,9,0{10}"]
    same = [f"{t},0,9,.{{10}}" for t in mixer.TASKS if t not in ("mixer0", "wave3")]
    _write_coded(tmp_path, rows, [*same, "mixer0,0,9,..3.{7}", "wave3,0,9,.{9}0"], 10)
    r = mixer.load(tmp_path)
    assert r.cpu_map["mixer0"] == [1] * 6 + [2] * 4 and r.cpu_map["mixer1"] == [0] * 10
    # mixer1 (CPU 0) shares an LLC with a producer's hand-over only at sample 9 (wave3, CPU 0)
    assert mixer.affine_fraction(r, "mixer1") == 0.1
    assert r.handover == {"mixer0": {2: 3}, "wave3": {9: 0}}
    assert r.cpu_out("mixer0")[:4] == [1, 1, 3, 1]
    assert mixer.report(r)["tasks"]["mixer0"]["cpu_changes"] == 1


GOOD_ROWS = [f"{t},0,9,0{{10}}" for t in mixer.TASKS]
GOOD_SAME = [f"{t},0,9,.{{10}}" for t in mixer.TASKS]


@pytest.mark.parametrize("rows, handover, what", [
    (GOOD_ROWS[1:], GOOD_SAME, "tasks"),
    (["wave0,1,9,0{9}"] + GOOD_ROWS[1:], GOOD_SAME, "does not follow"),
    (["wave0,0,9,0{9}"] + GOOD_ROWS[1:], GOOD_SAME, "codes 9 samples, not 10"),
    (["wave0,0,8,0{9}"] + GOOD_ROWS[1:], GOOD_SAME, "different sample counts"),
    (["wave0,0,9,0{9}!"] + GOOD_ROWS[1:], GOOD_SAME, "unreadable at character 5"),
    (["wave0,0,9,.{10}"] + GOOD_ROWS[1:], GOOD_SAME, "only handover.csv"),
    (["wave9,0,9,0{10}"] + GOOD_ROWS[1:], GOOD_SAME, "unknown task 'wave9'"),
    (GOOD_ROWS, GOOD_SAME[:-1], "tasks"),
    (GOOD_ROWS, ["wave0,0,8,.{9}"] + GOOD_SAME[1:], "wave0 covers 9 samples, cpus.csv 10"),
])
def test_broken_coded_maps_are_rejected(tmp_path, rows, handover, what):
    _write_coded(tmp_path, rows, handover, 10)
    with pytest.raises(UserError, match=re.escape(what)):
        mixer.load(tmp_path)


def test_non_monotonic_timestamps_are_rejected(tmp_path):
    _write(tmp_path, [f"{t},0,2,0" for t in mixer.TASKS], TOPO, 3)
    (tmp_path / "production.csv").write_text("production_ns\n5\n0\n")
    with pytest.raises(UserError, match="strictly increasing"):
        mixer.load(tmp_path)


def test_analyse_run_reads_and_never_writes_the_run(small_run, tmp_path):
    import shutil

    out, v = small_run
    rep = tmp_path / "artifacts" / "mixer" / "0"
    shutil.copytree(out, rep)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    lines = mixer.analyse_run(tmp_path)
    assert lines[0] == "repetition 0:" and "mu+2sigma" in lines[1]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    report = mixer.report(mixer.load(rep))
    assert math.isclose(report["production"]["rho_ns"], v["rho_ns"], rel_tol=1e-6, abs_tol=0.2)
    with pytest.raises(UserError, match="no artifacts"):
        mixer.analyse_run(tmp_path / "artifacts")
