"""Where a run's programs were in a job's ROI (schedlab/analysis/placement.py), on two real
gem5 traces of lee-fig17 (tests/data/placement/README.md) and on small made-up ones for the
cases those do not hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedlab.analysis import lee, placement
from schedlab.analysis.slices import parse_switches, roi_mark_writers, roi_marks

DATA = Path(__file__).parent / "data" / "placement"
VANILLA = DATA / "clovertown-x5365--libquantum--cbf4a127c1c9"
BALANCE = DATA / "clovertown-x5365--libquantum--07d2a3009d0f"
WESTMERE = DATA / "westmere-x5660--libquantum--44c70e62bb8f"


def _placed(run: Path, job_pid: int = 69) -> tuple[bool, list[placement.Program]]:
    text = (run / "trace.txt").read_text()
    marks = roi_marks(text)[("libquantum", 1)]
    return placement.programs_of_job(text, lee.parse_region_trace(text),
                                     json.loads((run / "spec.json").read_text()), "libquantum",
                                     job_pid, (marks["begin"], marks["end"]))


def _of(run: Path) -> dict:
    return placement.columns(*_placed(run))


def test_default_scheduler_run_placement_comes_from_its_switches():
    got = _of(VANILLA)
    # memlat pid 67 (16 KiB) is only named by the lines it wrote: without them it would be
    # "init" (its last switch was before its exec) and the memlats would go unnamed.
    assert got["llc_placement"] == ("llc 0: libquantum (job), memlat(region-size=4MiB) #1"
                                    " | llc 2: memlat(region-size=16KiB), "
                                    "memlat(region-size=4MiB) #2")
    assert got["placement_share"] == 1.0


def test_seconds_on_each_cache_fill_the_roi():
    """Every CPU was busy through the ROI but for CPU 0 after the job's stop (it exits at
    0.543641 s, the launcher marks the end at 0.543861 s): each memlat's seconds add up to
    the ROI's length (within the launcher's own 0.3 ms on CPU 1), the job's to its life in
    it, counted from the task running when the ROI opened."""
    text = (VANILLA / "trace.txt").read_text()
    begin, end = roi_marks(text)[("libquantum", 1)].values()
    spec = json.loads((VANILLA / "spec.json").read_text())
    llc = placement.llc_of_cpu(spec["machine"])
    assert llc == {0: 0, 1: 0, 2: 2, 3: 2}
    secs = placement.seconds_on_cache(parse_switches(text), (begin, end), llc)
    total = sum(sum(c.values()) for c in secs.values())
    assert total == pytest.approx(4 * (end - begin) - (end - 0.543641))
    assert sum(secs[69].values()) == pytest.approx(0.543641 - begin)
    for pid in (65, 66, 67):
        assert sum(secs[pid].values()) == pytest.approx(end - begin, abs=4e-4)


def test_a_run_without_switches_names_its_programs_but_does_not_place_them():
    """The region-balance run traced no switches (its policy then did not): its programs are
    named by their execs' order, for their counters, with no cache; the job's row gets no
    placement. (Its regions were mapped to both caches, and each task's last trace line
    before the ROI put two of them on CPU 0, although each ran the whole ROI on a CPU of
    its own: neither says where they ran.)"""
    placed, programs = _placed(BALANCE)
    assert not placed and placement.columns(placed, programs) == {}
    assert {p.name: p.pid for p in programs} == {
        "memlat(region-size=4MiB) #1": 65, "memlat(region-size=4MiB) #2": 66,
        "memlat(region-size=16KiB)": 67, "libquantum": 69}
    rows = placement.rows(programs, {})
    assert all(r["llc"] is None and r["llc_share"] != r["llc_share"] for r in rows)


def test_names_leave_seeds_aside_and_number_what_stays_alike():
    programs = [{"workload": "memlat", "args": ["--region-size", "4MiB", "--seed", "1"]},
                {"workload": "memlat", "args": ["--region-size", "4MiB", "--seed", "2"]},
                {"workload": "memlat", "args": ["--region-size", "16KiB", "--seed", "3"]},
                {"workload": "omnetpp", "args": []}]
    assert placement.program_names(programs) == [
        "memlat(region-size=4MiB) #1", "memlat(region-size=4MiB) #2",
        "memlat(region-size=16KiB)", "omnetpp"]


SWITCH = ("{comm}-{pid} [00{cpu}] d.... {t}: sched_switch: prev_comm={comm} prev_pid={pid} "
          "prev_prio=120 prev_state=R ==> next_comm={nxt} next_pid={npid} next_prio=120")


def _placed_in_window(text: str, background: list[dict], job_pid: int) -> dict:
    """The placement columns of a job ``job`` beside ``background`` on a 4-CPU machine of
    two L2s, in the window 1.5-2.5 s of ``text``."""
    spec = {"machine": {"llc": "l2", "caches": [{"name": "l2", "groups": [[0, 1], [2, 3]]}]},
            "request": {"jobs": [{"workload": "job", "args": []}], "background": background}}
    return placement.columns(*placement.programs_of_job(text, lee.parse_region_trace(text),
                                                        spec, "job", job_pid, (1.5, 2.5)))


def test_a_workload_with_more_pids_than_programs_is_left_out():
    """Two pids named ``ray`` for one ray-tracer program (its threads): which is the process
    cannot be told from switches, so it is not placed; the job still is."""
    text = "\n".join([
        SWITCH.format(comm="init", pid=1, cpu=0, t="1.000000", nxt="ray", npid=70),
        SWITCH.format(comm="init", pid=1, cpu=1, t="1.000000", nxt="ray", npid=71),
        SWITCH.format(comm="init", pid=1, cpu=2, t="1.000000", nxt="job", npid=72),
        SWITCH.format(comm="ray", pid=70, cpu=0, t="2.000000", nxt="swapper/0", npid=0)])
    got = _placed_in_window(text, [{"workload": "ray", "args": []}], 72)
    assert got == {"llc_placement": "llc 2: job (job)", "placement_share": 1.0}
    # The task on CPU 0 when the window opened ran until its switch at 2.0 s.
    secs = placement.seconds_on_cache(parse_switches(text), (1.5, 2.5), {0: 0, 1: 0, 2: 2})
    assert secs[70] == {0: pytest.approx(0.5)} and secs[71] == {0: pytest.approx(1.0)}


def test_no_marks_no_placement():
    text = (VANILLA / "trace.txt").read_text()
    spec = json.loads((VANILLA / "spec.json").read_text())
    assert placement.programs_of_job(text, lee.parse_region_trace(text), spec, "libquantum",
                                     69, None) == (False, [])


def test_each_programs_ipc_comes_from_its_attributed_counters():
    """The program rows join the placement with the per-task attribution of the job's ROI
    (the run's results.json, "tasks"): here the two large memlats barely ran (about 0.01
    instructions a cycle: every access a miss), the small one and libquantum did."""
    tasks = json.loads((VANILLA / "tasks.json").read_text())
    got = {r["program"]: r for r in placement.rows(_placed(VANILLA)[1], tasks)}
    assert set(got) == {"libquantum", "memlat(region-size=4MiB) #1",
                        "memlat(region-size=4MiB) #2", "memlat(region-size=16KiB)"}
    assert got["libquantum"]["is_job"] and got["libquantum"]["pid"] == 69
    assert got["libquantum"]["ipc"] == pytest.approx(tasks["69"]["insts"]
                                                      / tasks["69"]["cycles"])
    assert got["libquantum"]["llc"] == 0 and got["memlat(region-size=16KiB)"]["llc"] == 2
    for big in ("memlat(region-size=4MiB) #1", "memlat(region-size=4MiB) #2"):
        assert got[big]["ipc"] < 0.02 and got[big]["llc_mpki"] > 100
    assert got["memlat(region-size=16KiB)"]["ipc"] > 0.9


def test_a_program_that_exec_d_after_its_last_switch_is_named_by_its_lines():
    """As in a real lee-fig17 run (h264ref, default scheduler): a background memlat was
    switched in still named ``launch`` and never left its CPU after its exec; the lines it
    wrote carry the name the kernel saved last, ``memlat``, so all three are placed."""
    text = "\n".join([
        # Its line comes before the switch that names it launch: the name is the later.
        "          memlat-67      [002] d.s..     0.900000: sched_waking: comm=kworker/2:1 "
        "pid=59 prio=120 target_cpu=002",
        SWITCH.format(comm="swapper/1", pid=0, cpu=1, t="1.000000", nxt="memlat", npid=66),
        SWITCH.format(comm="swapper/2", pid=0, cpu=2, t="1.000000", nxt="launch", npid=67),
        SWITCH.format(comm="swapper/3", pid=0, cpu=3, t="1.000000", nxt="memlat", npid=68),
        SWITCH.format(comm="swapper/0", pid=0, cpu=0, t="1.000000", nxt="job", npid=70)])
    got = _placed_in_window(text, [{"workload": "memlat", "args": ["--seed", str(k)]}
                                   for k in (1, 2, 3)], 70)
    assert got == {"llc_placement": "llc 0: job (job), memlat #1 | llc 2: memlat #2, memlat #3",
                   "placement_share": 1.0}


def test_a_program_named_only_as_before_its_exec_is_counted_in():
    """The real Westmere run: memlat 128 ran its workload on CPU 11 from its exec on and
    wrote no line, so the trace names it ``init`` (its switch before the exec); the other
    two memlats are named. It is the third memlat (the k-th lowest pid), and the job's
    launcher (``launch``, the writer of the ROI's marks) and the runner (pid 1, ``init``)
    are not taken for programs. Without it no memlat was placed."""
    text = (WESTMERE / "trace.txt").read_text()
    comms = placement._task_names(text, parse_switches(text))
    assert (comms[126], comms[127], comms[128], comms[129]) == ("memlat", "memlat", "init",
                                                                "launch")
    assert roi_mark_writers(text) == {129}
    assert placement.names_before_exec(comms, text) == [128]
    got = placement.columns(*_placed(WESTMERE, job_pid=130))
    assert got["llc_placement"] == ("llc 0: memlat(region-size=6MiB) #1, "
                                    "memlat(region-size=6MiB) #2 | llc 6: libquantum (job), "
                                    "memlat(region-size=256KiB)")
    spec = json.loads((WESTMERE / "spec.json").read_text())
    programs = [*spec["request"]["background"], spec["request"]["jobs"][0]]
    assert placement.program_pids(programs, 3, 130, comms) == {3: 130}


def test_unnamed_pids_are_not_guessed_where_they_do_not_fill_the_gap():
    """Two workloads short of a program each, one unnamed pid: whose it is cannot be told."""
    programs = [{"workload": "a", "args": []}, {"workload": "b", "args": []},
                {"workload": "job", "args": []}]
    assert placement.program_pids(programs, 2, 9, {}, [5]) == {2: 9}
    # One workload short by one, two unnamed pids: neither is taken.
    assert placement.program_pids(programs[1:], 1, 9, {}, [5, 6]) == {1: 9}
    assert placement.program_pids(programs[1:], 1, 9, {}, [6]) == {0: 6, 1: 9}
