"""Processor pools (the sched/pools kernel-patches) under QEMU, on Hector's topology: 16 vCPUs in 4
sockets of 4 (the stations), CPUs 0-3 (station 0) kept for the system by being in no pool.

Each test boots the project's kernel with a small initramfs of busybox and ``pooltest``
(tests/data/pooltest.c): a driver that starts jobs one step at a time (a process, then its
threads one by one), lets jobs grow or end, and prints where each thread runs, whether it
ever ran elsewhere and whether sched_setaffinity() could move it. /init picks the scenario
named on the kernel command line, sets the pools and reads back /proc/sched_pools and the
tracepoints. QEMU says whether placement follows the rules (which CPU each thread gets), not
what pools do to memory traffic. Each boot takes 15 to 60 s on a loaded 2-core host.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scenario_guest import (BOOT_TIMEOUT, BUSYBOX, INIT_PREAMBLE, QEMU, boot, patched_kernel,
                            scenario_initramfs)

POOLTEST_C = Path(__file__).resolve().parent / "data" / "pooltest.c"
EAGAIN, EINVAL, EBUSY = 11, 22, 16

pytestmark = [
    pytest.mark.skipif(QEMU is None, reason="qemu-system-x86_64 not installed"),
    pytest.mark.skipif(not BUSYBOX.is_file(), reason="busybox-static not installed (/bin/busybox)"),
]

INIT = INIT_PREAMBLE + r"""for a in $(cat /proc/cmdline); do
    case $a in schedtest=*) TEST=${a#schedtest=};; placement=*) PLACEMENT=${a#placement=};; esac
done
echo "SCHEDTEST-BEGIN $TEST"
S=/proc/sys/kernel
dump() { echo "=== file $1"; cat "$2"; echo "=== end"; }
# pools CPU-LISTS [PLACEMENT]: define the pools, switch them on, trace placements afresh.
pools() {
    echo "$1" > $S/sched_pool_cpus
    echo ${2:-2} > $S/sched_pool_placement
    echo 1 > $S/sched_pools
    echo > $T/trace
    echo 1 > $T/events/sched/sched_pool_place/enable
    echo 1 > $T/events/sched/sched_pool_release/enable
}
traced() {
    echo "trace_place=$(grep -c 'sched_pool_place:' $T/trace)"
    echo "trace_fail=$(grep -c 'sched_pool_place:.*kind=fail' $T/trace)"
    echo "trace_release=$(grep -c 'sched_pool_release:' $T/trace)"
}
# try FILE VALUE KEY: write, print KEY=exit status
try() { echo "$2" > $1 2>/dev/null; echo "$3=$?"; }
case $TEST in
place)
    pools 4-9:10-11:12-15 $PLACEMENT
    /pooltest j1 j1 j1 j3 j2 p
    traced
    ;;
expand)
    pools 4-6:7-9 0
    /pooltest j1 j3 x1 g2:1 g2:1 g2:2 p
    traced
    ;;
full)
    pools 4-5:6-7 2
    /pooltest j6 j1 p w$S/sched_pool_cpus=4-7 w$S/sched_pools=0 x1 w$S/sched_pool_cpus=8-9:10-15 j3
    dump after /proc/sched_pools
    traced
    ;;
nomigrate)
    pools 4-7:8-11:12-15 2
    # Busy processes that are no jobs, for the load balancer to move around the jobs.
    noise=""
    for i in 1 2 3 4 5 6; do (while :; do :; done) & noise="$noise $!"; done
    /pooltest j4 j4 j4 s s s p
    kill $noise
    ;;
join)
    pools 4-7:8-11:12-15 2
    /pooltest --join j2 j2 j2 p
    ;;
off)
    pools 4-7:8-11:12-15 2
    echo 0 > $S/sched_pools
    /pooltest j3 j3 s p
    traced
    ;;
knobs)
    echo "boot_pools=$(cat $S/sched_pools)"
    echo "boot_placement=$(cat $S/sched_pool_placement)"
    echo "unparsed=$(dmesg | grep -c 'Unable to parse sched_pool')"
    try $S/sched_pool_placement 4 placement4_rc
    try $S/sched_pools 2 pools2_rc
    try $S/sched_pool_cpus 4-7:7-9 overlap_rc
    try $S/sched_pool_cpus 4-x not_list_rc
    try $S/sched_pool_cpus 4-99 offline_rc
    echo "logged=$(dmesg | grep -c 'sched_pool_cpus: pool 1 "7-9" shares CPUs')"
    echo "logged_list=$(dmesg | grep -c 'sched_pool_cpus: pool 0 "4-x" is not a list of CPUs')"
    try $S/sched_pool_cpus 4-7,9:8 good_rc
    echo "pool_cpus=$(cat $S/sched_pool_cpus)"
    /pooltest --probe
    try $S/sched_pool_cpus "" empty_rc
    echo "pool_cpus_empty=[$(cat $S/sched_pool_cpus)]"
    dump knobs /proc/sched_pools
    ;;
esac
echo "SCHEDTEST-END"
poweroff -f
"""


def hector_smp() -> str:
    """QEMU's -smp for Hector: its 16 processors, one socket per station."""
    from schedlab.guest.pools import job_cpus
    from schedlab.machine import load_machine

    m = load_machine("hector")
    # The scenarios' pools are written for Hector's job CPUs, stations 1-3.
    assert job_cpus(m) == tuple(range(4, 16)), job_cpus(m)
    return f"{m.cores},sockets={len(m.nodes)},cores={m.cores // len(m.nodes)}"


@pytest.fixture(scope="module")
def kernel():
    return patched_kernel("sched_pools", "processor pool")


@pytest.fixture(scope="module")
def initramfs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pools-initramfs")
    return scenario_initramfs(root, INIT, {"pooltest": (POOLTEST_C.read_text(), ["-pthread"])},
                              {})


def run(kernel, initramfs, test: str, extra: list[str] = ()):
    """Boot one scenario on Hector's topology: (values, files, console)."""
    return boot(kernel, initramfs, test, list(extra), smp=hector_smp())


def cpus(value: str) -> list[int]:
    """pooltest's jobK=4,5,-11 -> [4, 5, -11] (a negative entry: -errno, no thread)."""
    return [int(c) for c in value.split(",")]


def state(files: dict, name: str = "/proc/sched_pools"):
    from schedlab.guest.pools import parse_sched_pools
    return parse_sched_pools(files[name])


# ---------------------------------------------------------------------------------------------
# Pools 4-9 (6 CPUs), 10-11 (2), 12-15 (4); jobs of 1, 1, 1, 3 and 2 threads, started one
# after another, all kept running. Each row is what the policy's rule gives, by hand:
#   first-fit       the first pool with a free CPU: pool 0 until full, then pool 1
#   best-fit        the fewest free CPUs: pool 1 (2) twice, then pool 2 (4), then pool 0
#   worst-fit       the most free CPUs, the first listed on a tie: 0 (6), 0 (5), 0 (4 = 4:
#                   tie with pool 2), 2 (4 > 3), 0 (3 > 2 > 1)
#   worst-fit-jobs  the fewest jobs, then the most free CPUs: 0, 2, 1 (no job yet), then
#                   every pool has one job: 0 (most free); then 2 (1 job) before 0 (2 jobs)
# Later threads of a job stay in its pool while it has room (expansion).
PLACEMENT_TABLE = {
    "first-fit": ([4], [5], [6], [7, 8, 9], [10, 11]),
    "best-fit": ([10], [11], [12], [13, 14, 15], [4, 5]),
    "worst-fit": ([4], [5], [6], [12, 13, 14], [7, 8]),
    "worst-fit-jobs": ([4], [12], [10], [5, 6, 7], [13, 14]),
}


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
@pytest.mark.parametrize("placement", list(PLACEMENT_TABLE))
def test_each_placement_policy_places_a_sequence_of_jobs_by_its_rule(kernel, initramfs,
                                                                     placement):
    from schedlab.guest.pools import PLACEMENTS

    v, files, console = run(kernel, initramfs, "place",
                            [f"placement={PLACEMENTS.index(placement)}"])
    assert "job5" in v, console[-3000:]
    got = tuple(cpus(v[f"job{k}"]) for k in range(1, 6))
    assert got == PLACEMENT_TABLE[placement], v
    s = state(files)
    assert s.enabled and s.placement == placement
    # Five first threads by the policy, three expansions, nothing refused.
    assert s.placed[placement] == 5 and sum(s.placed.values()) == 5, s.placed
    assert (s.expansions, s.spills, s.failures) == (3, 0, 0), s
    for k, job in enumerate(got, start=1):
        assert s.cpus_of(s.holders[job[0]][0]) == sorted(job), (k, s.holders)
        assert v[f"job{k}_moved"] == "0" and v[f"job{k}_pinned"] == str(len(job)), v
    taken = [c for job in got for c in job]
    assert [p.free for p in s.pools] == [len(set(p.cpus) - set(taken)) for p in s.pools]
    assert [p.jobs for p in s.pools] == [sum(any(c in p.cpus for c in job) for job in got)
                                         for p in s.pools]
    # Every placement traced, every CPU given back when the jobs ended.
    assert (v["trace_place"], v["trace_fail"], v["trace_release"]) == ("8", "0", "8"), v


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_expansion_prefers_the_jobs_pool_with_fewest_of_its_threads_then_spills(kernel,
                                                                                initramfs):
    # First-fit on pools 4-6 and 7-9. Job 1 takes CPU 4; job 2 (3 threads) takes 5 and 6,
    # finds pool 0 full and spills to 7. Job 1 ends (4 is free again). Job 2 grows by one:
    # pool 0 holds 2 of its threads, pool 1 one, both have room -> pool 1 (8). Grows again:
    # 2 and 2 -> the first listed, pool 0 (4). Grows by two: 9, then nothing is free.
    v, files, console = run(kernel, initramfs, "expand")
    assert cpus(v["job1"]) == [4], console[-3000:]
    assert cpus(v["job2"]) == [5, 6, 7, 8, 4, 9, -EAGAIN], v
    s = state(files)
    assert s.placed["first-fit"] == 3 and (s.expansions, s.spills, s.failures) == (4, 1, 1), s
    assert s.pools_of(s.holders[5][0]) == {0: 3, 1: 3}, s.holders
    assert (v["trace_place"], v["trace_fail"], v["trace_release"]) == ("8", "1", "7"), v


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_full_pools_refuse_threads_and_jobs_and_are_redefined_when_empty(kernel, initramfs):
    v, files, console = run(kernel, initramfs, "full")
    # Worst-fit on pools 4-5 and 6-7: 4 threads fit, pthread_create fails twice with EAGAIN,
    # and so does the fork of the next job.
    assert cpus(v["job1"]) == [4, 5, 6, 7, -EAGAIN, -EAGAIN], console[-3000:]
    assert v["job2_fork"] == str(-EAGAIN), v
    s = state(files)
    assert s.failures == 3 and all(p.free == 0 for p in s.pools), s
    assert all(s.holders[c] for c in range(4, 8)), s.holders
    # While threads hold CPUs, neither the pools nor the switch change.
    assert (v["w1"], v["w2"]) == (str(-EBUSY), str(-EBUSY)), v
    # Job 1 ended: new pools (2 and 6 CPUs), and worst-fit puts job 3 in the larger one.
    assert v["w3"] == "0" and cpus(v["job3"]) == [10, 11, 12], v
    after = state(files, "after")
    assert [p.cpus for p in after.pools] == [(8, 9), tuple(range(10, 16))], after
    assert after.failures == 3 and after.placed["worst-fit"] == 3, after
    assert v["trace_fail"] == "3", v


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_placed_threads_never_migrate_even_beside_busy_processes(kernel, initramfs):
    v, files, console = run(kernel, initramfs, "nomigrate")
    assert [cpus(v[f"job{k}"]) for k in (1, 2, 3)] == [
        [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]], console[-3000:]
    # Three seconds of 2 ms sleeps (a wake-up placement each) beside six busy processes:
    # no thread ever ran on another CPU, and sched_setaffinity() could move none.
    for k in (1, 2, 3):
        assert (v[f"job{k}_moved"], v[f"job{k}_pinned"]) == ("0", "4"), v
    s = state(files)
    assert all(p.free == 0 and p.jobs == 1 for p in s.pools), s


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_a_process_that_joins_is_placed_like_a_forked_job(kernel, initramfs):
    v, files, console = run(kernel, initramfs, "join")
    assert [cpus(v[f"job{k}"]) for k in (1, 2, 3)] == [[4, 5], [8, 9], [12, 13]], \
        console[-3000:]
    assert all(v[f"job{k}_pinned"] == "2" and v[f"job{k}_moved"] == "0" for k in (1, 2, 3))
    s = state(files)
    assert s.placed["worst-fit"] == 3 and s.expansions == 3, s


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_switch_off_leaves_jobs_alone(kernel, initramfs):
    v, files, console = run(kernel, initramfs, "off")
    s = state(files)
    assert not s.enabled, console[-3000:]
    assert sum(s.placed.values()) == 0 and (s.expansions, s.spills, s.failures) == (0, 0, 0)
    assert not any(s.holders.values()), s.holders
    # The threads were created (none refused) and sched_setaffinity() moved each of them.
    for k in (1, 2):
        assert len(cpus(v[f"job{k}"])) == 3 and min(cpus(v[f"job{k}"])) >= 0, v
        assert v[f"job{k}_pinned"] == "0", v
    assert (v["trace_place"], v["trace_release"]) == ("0", "0"), v


@pytest.mark.timeout(3 * BOOT_TIMEOUT)
def test_boot_parameters_sysctls_and_prctl(kernel, initramfs):
    v, files, console = run(kernel, initramfs, "knobs",
                            ["sched_pools=enable", "sched_pool_placement=best-fit"])
    assert (v["boot_pools"], v["boot_placement"], v["unparsed"]) == ("1", "1", "0"), \
        console[-3000:]
    # Bad values are refused, and a bad pool list says why in the log.
    assert all(v[k] != "0" for k in ("placement4_rc", "pools2_rc", "overlap_rc",
                                     "not_list_rc", "offline_rc")), v
    assert (v["logged"], v["logged_list"]) == ("1", "1"), v
    assert v["good_rc"] == "0" and v["pool_cpus"] == "4-7,9:8", v
    # The prctl: nothing before; bad command or argument EINVAL; a process with two
    # threads cannot join (EBUSY); a single-threaded one joins, is placed by best-fit in
    # the pool of one CPU (8) and bound there; SPAWN marks only the forks.
    assert v["get_before"] == "0", v
    assert (v["bad_cmd"], v["bad_arg"], v["join_threaded"]) == (
        str(-EINVAL), str(-EINVAL), str(-EBUSY)), v
    assert (v["child_get"], v["join"], v["get_joined"]) == ("0", "0", "3"), v
    assert (v["joined_cpu"], v["joined_pinned"], v["join_again"]) == ("8", "1", "0"), v
    assert (v["spawn"], v["get_spawn"]) == ("0", "2"), v
    # Every CPU free again: the pools can be removed.
    assert v["empty_rc"] == "0" and v["pool_cpus_empty"] == "[]", v
    s = state(files, "knobs")
    assert s.placement == "best-fit" and s.placed["best-fit"] == 1 and s.pools == (), s

    v, _, console = run(kernel, initramfs, "knobs",
                        ["sched_pools=on", "sched_pool_placement=spread"])
    assert (v["boot_pools"], v["boot_placement"], v["unparsed"]) == ("0", "2", "2"), \
        console[-3000:]


@pytest.mark.timeout(1800)
def test_study_4s_streams_run_as_pool_jobs_through_the_runner(tmp_path, monkeypatch):
    """The way study 4's runs go: the streams driver under a pools policy (which appends
    --pool-jobs 1) through the project's runner; every job's threads are placed in one pool
    and released, and the driver itself is no job."""
    import json
    import re

    from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    run_dir = execute(prepare(RunRequest(machine="hector", backend="qemu",
                                         policy="pools-4-worst-fit",
                                         jobs=(WorkloadRequest("streams", size="smoke"),))))
    res = json.loads((run_dir / "results.json").read_text())
    assert res["ok"], res["errors"]
    # Hector's guest kernel is its own: 100 Hz (configs/machines.toml, tick_hz).
    from schedlab.guest import kernel
    assert res["hashes"]["kernel"] == kernel.build_key(tick_hz=100) != kernel.build_key()
    (job,) = res["jobs"]
    trace = (run_dir / "artifacts" / "trace.txt").read_text()
    placed = [m.groupdict() for m in re.finditer(
        r"sched_pool_place: pid=(?P<pid>\d+) tgid=(?P<tgid>\d+) kind=(?P<kind>\w+) "
        r"placement=worst-fit pool=(?P<pool>\d+) cpu=(?P<cpu>\d+)", trace)]
    jobs: dict[str, list[dict]] = {}
    for p in placed:
        jobs.setdefault(p["tgid"], []).append(p)
    # smoke: 2 streams x 6 kernels, each kernel a job of --threads 2.
    assert len(jobs) == job["metrics"]["jobs"] == 12
    for threads in jobs.values():
        assert [t["kind"] for t in threads] == ["first", "expand"]
        assert len({t["pool"] for t in threads}) == 1                  # one pool per job
        assert all(4 <= int(t["cpu"]) <= 15 for t in threads)         # never station 0
    assert trace.count("sched_pool_release:") == len(placed)
