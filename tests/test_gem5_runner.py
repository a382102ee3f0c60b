"""gem5 through the project's runner: ``run.py run --backend gem5`` end to end, on real gem5.

Needs GEM5 (a gem5 v24.0 build/X86/gem5.fast); skipped otherwise with the reason printed.
Unlike tests/test_gem5_integration.py (a minimal self-test guest), these boot the runner
image every user run boots (busybox runner, launcher; the workloads come with each run's
payload), so they check:
- the guest of every machine in SCHEDLAB_GEM5_TEST_MACHINES (default: Clovertown MUP) sees
  the modelled LLC groups and NUMA nodes (schedlab.backends.gem5.topology against the
  runner's facts);
- a workload's region of interest becomes IPC and misses per kilo-instruction in
  results.json, with 0 < IPC <= issue width; on NUMA machines its memory traffic stays on
  its own node's banks (the guest's nodes are the model's banks);
- per-task attribution (kernel.sched_m5_switch, kernel-patches/0010): a workload sharing
  CPU 0 with a background task gets its own counters, and the number of times gem5 saw it
  switched out equals the kernel's own count of its context switches;
- the user's programs restore the machine's own checkpoint: a C file, and a dynamically
  linked program (rt-tests' hackbench over AF_UNIX sockets) with its libraries.
- the same request made twice, seconds apart, is the same run (every simulated statistic),
  and draws the same address-space layout; another seed draws another.

Cost: one boot to the checkpoint per machine (minutes; cached), a minute or two per restore.
``SCHEDLAB_UPDATE_FIXTURES=1`` saves the guest's facts as tests/data/gem5/facts-<machine>.json
for tests/test_gem5_check.py.
"""

import json
import os
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not os.environ.get("GEM5"),
                       reason="GEM5 not set: export GEM5=/path/to/gem5/build/X86/gem5.fast "
                              "(gem5 v24.0) to run the gem5 runner tests"),
    pytest.mark.timeout(4 * 3600),
]

MACHINES = os.environ.get("SCHEDLAB_GEM5_TEST_MACHINES", "clovertown-e5320-mup").split(",")
FIXTURES = Path(__file__).parent / "data" / "gem5"


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def _run(request):
    from schedlab.runs import execute, prepare
    run_dir = execute(prepare(request, progress=print), progress=print)
    return run_dir, json.loads((run_dir / "results.json").read_text())


@pytest.mark.parametrize("name", MACHINES)
def test_runner_on_gem5_sees_the_model_and_measures_the_roi(name, results_dir):
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.backends.gem5.topology import topology_problems
    from schedlab.machine import load_machine
    from schedlab.backends.gem5.backend import GEM5_BACKEND
    from schedlab.runs import RunRequest, WorkloadRequest
    machine = load_machine(name).to_dict()
    cpu = "o3" if machine["pipeline"]["kind"] == "out-of-order" else "timing"
    run_dir, res = _run(RunRequest(machine=name, backend="gem5", cpu=cpu,
                                   jobs=(WorkloadRequest("memlat", cpus="0"),), timeout=3 * 3600))
    assert res["ok"], res["errors"]
    assert topology_problems(plan_from_dict(machine), machine, res["facts"]) == []
    # gem5 runs trace into small per-CPU buffers (cheap to set up, little guest memory).
    want = GEM5_BACKEND.trace_buffer_kb
    assert want <= int(res["facts"]["trace.buffer_size_kb"]) < 1.01 * want
    job = res["jobs"][0]
    width = machine["pipeline"]["width"] if cpu == "o3" else 1
    assert 0 < job["gem5"]["ipc"] <= width
    # memlat's random walk misses the L1 D-cache on most of its 1e6 dependent loads.
    assert job["gem5"]["l1d_misses"] > 500_000
    assert job["gem5"]["insts"] > 4_000_000
    if len(machine["nodes"]) > 1:
        _assert_job_memory_is_node_local(machine, run_dir, job["gem5"])
    info = json.loads((run_dir / "gem5.json").read_text())
    assert info["gem5_version"].startswith("24.0") and info["cpu"] == cpu
    if os.environ.get("SCHEDLAB_UPDATE_FIXTURES"):
        (FIXTURES / f"facts-{name}.json").write_text(json.dumps(res["facts"], indent=1) + "\n")


def _assert_job_memory_is_node_local(machine, run_dir, metrics):
    """The guest's NUMA nodes are the model's banks: the pages memlat (pinned to CPU 0)
    writes are allocated on CPU 0's node (Linux's first touch), so the exclusive requests
    (store misses, page zeroing) from CPU 0's caches go over the links to that node's banks.
    Reads also fetch shared pages (the program's text in the page cache, kernel data) that
    may lie on any node, so they are not expected to be local."""
    from schedlab.backends.gem5.plan import plan_from_dict
    plan = plan_from_dict(machine)
    dumps = json.loads((run_dir / "stats.json").read_text())
    roi = [d for d in dumps if d.get("schedlab.roi")][0]
    requester = next(r for r in plan.memory.requesters if 0 in r.cores)
    exclusive = {"local": 0, "node": 0, "remote": 0}
    for bank, cls in enumerate(requester.bank_class):
        exclusive[cls] += roi.get(f"board.cache_hierarchy.{requester.link(bank)}"
                                  f".ReadExReq.accesses::total", 0)
    on_node = exclusive["local"] + exclusive["node"]
    assert on_node > 1000, exclusive
    assert exclusive["remote"] < 0.1 * on_node, exclusive
    # The machine-wide split by latency class reaches results.json.
    assert metrics["numa_local_accesses"] > 0 and 0 < metrics["numa_local_share"] < 1


def test_task_attribution_charges_the_workload_its_own_counters(results_dir):
    from schedlab.runs import RunRequest, WorkloadRequest
    name = MACHINES[0]
    run_dir, res = _run(RunRequest(
        machine=name, backend="gem5", cpu="timing", attribute_tasks=True,
        jobs=(WorkloadRequest("memlat", cpus="0"),),
        background=(WorkloadRequest("bv_0", size="paper", cpus="0"),), timeout=3 * 3600))
    assert res["ok"], res["errors"]
    job = res["jobs"][0]
    task = job["gem5_task"]
    # The kernel counted every switch-out of the task; gem5 saw each one as an m5 op.
    assert task["switches"] == job["switches"] > 1
    # memlat runs about 4.3 M user instructions (cachegrind) plus its kernel work, and it
    # shared CPU 0: its share is most of, but not all, the busy core's instructions.
    assert 4_000_000 < task["insts"] < job["gem5"]["insts"]
    assert 0 < task["ipc"] <= 1
    assert task["l1d_misses"] > 500_000
    # Its 128 KiB working set comes into the L2 once: 2048 cold misses that are its own.
    assert 1500 < task["llc_misses"] <= job["gem5"]["l2_misses"]
    others = {pid: t for pid, t in job["tasks"].items() if pid != str(job["pid"])}
    assert others, "the background task and the idle task must have been charged too"
    # Every instruction of the region is some task's (the task running at the region's end
    # included): the shares add up to the CPUs' totals. The totals come from the guest's
    # "m5 dumpstats", a second m5 process after "m5 workend": they also hold the few
    # instructions and the cache misses of starting that process, so instructions agree to
    # 1e-4 and misses are bounded by the totals.
    charged = {k: sum(t.get(k, 0) for t in job["tasks"].values())
               for k in ("insts", "l1d_misses", "l1i_misses")}
    assert charged["insts"] == pytest.approx(job["gem5"]["insts"], rel=1e-4)
    assert charged["l1d_misses"] <= job["gem5"]["l1d_misses"]
    assert charged["l1i_misses"] <= job["gem5"]["l1i_misses"]


def _simulated_stats(run_dir: Path) -> list[str]:
    """The run's gem5 statistics without those about the host (hostSeconds, hostMemory,
    hostInstRate, ...)."""
    return [line for line in (run_dir / "gem5" / "stats.txt").read_text().splitlines()
            if not line.startswith("host")]


def test_the_same_request_made_twice_is_the_same_run(tmp_path, monkeypatch):
    # gem5 is deterministic, so a run must be a function of its request alone: nothing
    # of the moment it is made (an archive entry dated by its file's mtime did that) may
    # reach the guest. Two stores, the second run started seconds after the first.
    import time
    from schedlab.runs import RunRequest, WorkloadRequest
    # memlat, not sha: sha's known-answer check fails on gem5 (SHA-256("abc") comes out
    # 666093d9...; every seed and layout, also at 1e89e03: not looked into yet).
    request = RunRequest(machine=MACHINES[0], backend="gem5", attribute_tasks=True,
                         jobs=(WorkloadRequest("memlat", size="smoke"),),
                         label={"test": "determinism"})
    runs = []
    for store in ("first", "second"):
        monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path / store))
        runs.append(_run(request))
        time.sleep(2)
    (a, res_a), (b, res_b) = runs
    assert res_a["ok"] and res_b["ok"]
    assert a.name == b.name
    stats_a, stats_b = _simulated_stats(a), _simulated_stats(b)
    assert stats_a and stats_a == stats_b
    assert res_a["jobs"][0]["gem5"] == res_b["jobs"][0]["gem5"]
    # The same seed drew the same layout; another seed (another run) draws another one.
    assert res_a["facts"]["random.seed"] == "0"
    assert res_a["facts"]["random.mmap_probe"] == res_b["facts"]["random.mmap_probe"]
    import dataclasses
    other, res_other = _run(dataclasses.replace(request, seed=1))
    assert res_other["ok"] and other.name != a.name
    assert res_other["facts"]["random.mmap_probe"] != res_a["facts"]["random.mmap_probe"]


def test_a_benchmark_sharing_its_cpu_is_charged_what_it_runs_alone(results_dir):
    """Study 1's measurement: parser bound to CPU 0 with a base vector, both SCHED_RR with a
    2 ms quantum, is charged the instructions it executes alone (within 2 %: the difference
    is the kernel work its extra context switches cause)."""
    from schedlab.campaigns.kazempour import SHARED_CPU
    from schedlab.runs import RunRequest, WorkloadRequest
    name = MACHINES[0]
    insts = {}
    for beside in ((), (WorkloadRequest("bv_0", size="paper", cpus="0", **SHARED_CPU),)):
        run_dir, res = _run(RunRequest(
            machine=name, backend="gem5", cpu="timing", attribute_tasks=True,
            policy="quantum-2ms", jobs=(WorkloadRequest("parser", cpus="0", **SHARED_CPU),),
            background=beside, timeout=3 * 3600))
        assert res["ok"], res["errors"]
        job = res["jobs"][0]
        assert job["exit"] == 0
        insts[bool(beside)] = job["gem5_task"]["insts"]
        # The policy's scheduler trace came out (m5 writefile, straight from tracefs).
        assert f"next_pid={job['pid']}" in (run_dir / "artifacts" / "trace.txt").read_text()
        if beside:
            assert job["gem5_task"]["switches"] > 10     # it really shared CPU 0
        else:
            # Alone it had the machine: nearly all the region's instructions are its own
            # (the other core idles in hlt).
            assert job["gem5_task"]["insts"] > 0.9 * job["gem5"]["insts"]
    print("parser instructions alone / beside BV_0:", insts)
    assert insts[True] == pytest.approx(insts[False], rel=0.02)


@pytest.mark.parametrize("quantum_ms", [10, 200])
def test_study_1s_longer_quanta_on_gem5s_clock(quantum_ms, results_dir):
    """Study 1's 10 and 200 ms quanta on gem5's simulated clock (every committed study-1 run
    checks the 2 ms one, tests/test_kazempour_data.py): a benchmark and BV_L1I bound to CPU
    0 as SCHED_RR alternate in turns of Q within 10 %. Atomic cores: the turns are the
    kernel's timeslices, which the core model does not change, and five 200 ms turns take a
    simulated second (about half an hour of host time on these cores)."""
    from schedlab.analysis import slices
    from schedlab.campaigns.kazempour import SHARED_CPU
    from schedlab.runs import RunRequest, WorkloadRequest
    run_dir, res = _run(RunRequest(
        machine=MACHINES[0], backend="gem5", cpu="atomic", policy=f"quantum-{quantum_ms}ms",
        jobs=(WorkloadRequest("gzip", size="paper", cpus="0", duration=5 * quantum_ms / 1000,
                              **SHARED_CPU),),
        background=(WorkloadRequest("bv_l1i", size="paper", cpus="0", **SHARED_CPU),)))
    assert res["ok"], res["errors"]
    switches = slices.read_trace(run_dir)
    cpu, tracked = slices.sharing_pids(switches, res["jobs"][0]["pid"])
    region = slices.within(switches, slices.roi_window(run_dir, "gzip", 1))
    report = slices.quantum_report(region, cpu, tracked, quantum_ms)
    print(f"turns at Q = {quantum_ms} ms on gem5 (ms):",
          [round(x, 3) for x in report["lengths_ms"]])
    assert cpu == 0 and len(tracked) == 2 and report["alternating"]
    assert report["full_turns"] >= 3 and report["within"] == 1.0, report


def test_user_machine_runs_on_its_bases_checkpoint(results_dir, tmp_path):
    # A machine file's machine reaches gem5 as a catalogue machine does (its resolved dict
    # in the spec): a bigger L2 than the base's is what gem5 builds, and since caches are
    # not in the checkpoint key, the run restores the base machine's boot checkpoint.
    from schedlab.backends.gem5.binary import probe
    from schedlab.backends.gem5.checkpoint import checkpoint_key, guest_boot_args
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.backends.gem5.topology import topology_problems
    from schedlab.machine import load_machine
    from schedlab.runs import RunRequest, WorkloadRequest
    base = MACHINES[0]
    machines = tmp_path / "mine.toml"
    machines.write_text(f'[machines.bigger-l2]\nbase = "{base}"\n'
                        f'caches = {{ l2 = {{ size = "8MiB", assoc = 8 }} }}\n')
    machine = load_machine(f"{machines}:bigger-l2").to_dict()
    cpu = "o3" if machine["pipeline"]["kind"] == "out-of-order" else "timing"
    run_dir, res = _run(RunRequest(machine=f"{machines}:bigger-l2", backend="gem5", cpu=cpu,
                                   jobs=(WorkloadRequest("memlat", cpus="0"),),
                                   timeout=3 * 3600))
    assert res["ok"], res["errors"]
    assert res["machine"] == "bigger-l2"
    assert topology_problems(plan_from_dict(machine), machine, res["facts"]) == []
    config = (run_dir / "gem5" / "config.ini").read_text()
    l2 = config[config.index("[board.cache_hierarchy.l2_0]"):]
    assert f"size={8 << 20}\n" in l2[:l2.index("\n[")]
    info = json.loads((run_dir / "gem5.json").read_text())
    base_machine = load_machine(base).to_dict()
    base_plan = plan_from_dict(base_machine)
    assert info["checkpoint"]["key"] == checkpoint_key(
        probe(), base_plan, info["checkpoint"]["kernel"], info["checkpoint"]["image"],
        guest_boot_args(base_machine, base_plan))


def test_user_programs_restore_the_shared_checkpoint(results_dir, tmp_path):
    """A C file and a dynamically linked program (rt-tests' hackbench, if installed) run
    on gem5 from the boot checkpoint the registry's workloads use: no boot of their own."""
    import shutil
    from schedlab.runs import RunRequest, WorkloadRequest
    source = tmp_path / "pair.c"
    source.write_text('#include <stdio.h>\n#include <sys/socket.h>\n#include <unistd.h>\n'
                      'int main(void) { int sv[2]; char c = 0;\n'
                      '  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;\n'
                      '  if (write(sv[0], "x", 1) != 1 || read(sv[1], &c, 1) != 1) return 2;\n'
                      '  printf("socketpair_ok=%d\\n", c == \'x\'); return 0; }\n')
    jobs = [WorkloadRequest(str(source))]
    hackbench = shutil.which("hackbench")
    if hackbench:
        jobs.append(WorkloadRequest(hackbench, args=("-g", "1", "-f", "2", "-l", "5")))
    name = MACHINES[0]
    _, memlat = _run(RunRequest(machine=name, backend="gem5", cpu="atomic",
                                jobs=(WorkloadRequest("memlat", cpus="0"),)))
    run_dir, res = _run(RunRequest(machine=name, backend="gem5", cpu="atomic",
                                   jobs=tuple(jobs), timeout=3600))
    assert res["ok"], res["errors"]
    assert res["jobs"][0]["metrics"] == {"socketpair_ok": 1}
    if hackbench:
        assert any(line.startswith("Time:") for line in res["jobs"][1]["output"])
    checkpoints = [json.loads((d / "gem5.json").read_text())["checkpoint"]["key"]
                   for d in (run_dir, run_dir.parent / memlat["run_id"])]
    assert checkpoints[0] == checkpoints[1]


def test_a_region_whose_workload_is_not_stopped_ends_the_run(results_dir, tmp_path):
    """A workload that ignores the launcher's SIGTERM keeps its region open; gem5 stops at
    the region limit (twice the duration plus the grace) with the reason, not at the 6 h
    host timeout."""
    import re
    from schedlab.backends.gem5.binary import Gem5Error
    from schedlab.backends.gem5.backend import region_limit
    from schedlab.runs import RunRequest, WorkloadRequest
    source = tmp_path / "deaf.c"
    source.write_text('#include <signal.h>\n'
                      'int main(void) { signal(SIGTERM, SIG_IGN); for (;;) ; }\n')
    request = RunRequest(machine=MACHINES[0], backend="gem5", cpu="atomic",
                         jobs=(WorkloadRequest(str(source), cpus="1", duration=0.001),),
                         timeout=3600)
    limit = region_limit(request)
    with pytest.raises(Gem5Error, match=r"a region of interest lasted 0\.[0-9]+ s simulated, "
                                        rf"more than the {re.escape(f'{limit:g}')} s its"):
        _run(request)
