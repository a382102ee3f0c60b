"""The software mixer natively (without the task-affinity declaration) and its host-side analysis."""

from __future__ import annotations

import math
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


def run(exe: Path, out: Path, *args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, dict]:
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


def test_output_is_compact_at_paper_size(exe, tmp_path):
    # 150 000 samples is the paper's size; its files must stay well under a few MB.
    r, v = run(exe, tmp_path, "--samples", "150000", "--packet", "64", "--no-verify", timeout=120)
    assert r.returncode == 0, r.stderr
    total = sum((tmp_path / f).stat().st_size for f in mixer.FILES)
    assert total < 3_000_000, total
    assert len(mixer.load(tmp_path).production_ns) == 149_999


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
