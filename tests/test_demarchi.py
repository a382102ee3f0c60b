"""Study 2's definitions and its per-task miss rates (schedlab.campaigns.demarchi,
schedlab.analysis.demarchi)."""

from __future__ import annotations

import dataclasses

import pytest

from schedlab.analysis.demarchi import _miss_rates
from schedlab.campaigns.experiment import get


@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_every_run_has_the_same_background_under_every_policy(scale):
    runs = get("demarchi-table1").requests(scale, "gem5")
    assert {r.policy for r in runs} == {"vanilla", "task-affinity"}
    backgrounds = {r.background for r in runs}
    assert len(backgrounds) == 1
    (noise,) = backgrounds.pop()
    # Unbound and not real-time: the FIFO mixer preempts it as it would real daemons.
    assert noise.workload == "sysnoise" and noise.cpus is None and noise.sched == "other"
    assert all(r.jobs[0].sched == "fifo" for r in runs)


def test_miss_rates_per_task_and_together():
    # Counters as the attribution charges them to each thread id.
    job = {"tasks": {
        "101": {"l1d_load_misses": 10.0, "l1d_load_accesses": 100.0,
                "l1d_store_misses": 1.0, "l1d_store_accesses": 50.0},
        "102": {"l1d_load_misses": 30.0, "l1d_load_accesses": 100.0,
                "l1d_store_misses": 3.0, "l1d_store_accesses": 50.0},
        "999": {"l1d_load_misses": 500.0, "l1d_load_accesses": 600.0}}}   # not the mixer's
    out = _miss_rates(job, {"wave0": 101, "mixer2": 102, "mixer1": 103})
    assert out["wave0_l1d_load_miss_rate"] == 0.1 and out["mixer2_l1d_store_miss_rate"] == 0.06
    assert out["mixer_l1d_load_miss_rate"] == 0.2 and out["mixer_l1d_store_miss_rate"] == 0.04
    assert not any(k.startswith("mixer1_") for k in out)     # never charged: no rate
    assert "mixer_llc_load_miss_rate" not in out              # no last-level counts given


def test_idle_check_runs_one_condition_under_each_idle_mode():
    from schedlab.campaigns import demarchi
    check = get("demarchi-idle").requests("smoke", "gem5")
    assert [r.label["idle"] for r in check] == ["default", "halt", "poll", "halt-poll"]
    assert [r.boot_args for r in check] == [(), ("idle=halt",), ("idle=poll",),
                                            ("idle=halt", "sched_idle_poll_us=100")]
    # Apart from how CPUs idle, the four are one run: machine A, 4 cores, vanilla, rep 0.
    assert len({(r.machine, r.policy, r.jobs, r.background) for r in check}) == 1
    # The figures' runs use IDLE; the check's run in that mode is theirs but for the mixer's
    # length (300 samples against 1500) and the trace buffer that length needs.
    figures = get("demarchi-table1").requests("smoke", "gem5")
    assert {r.boot_args for r in figures} == {demarchi.IDLE_BOOT_ARGS[demarchi.IDLE]}
    (same,) = [r for r in check if r.label["idle"] == demarchi.IDLE]
    assert [j.size for j in same.jobs] == ["sim"]
    theirs = [r for r in figures if r.machine == same.machine and r.policy == same.policy
              and r.label["rep"] == 0]
    assert [r.jobs[0].size for r in theirs] == ["sim_long"]
    assert dataclasses.replace(same, jobs=theirs[0].jobs, trace_buffer_kb=4096,
                               label={k: v for k, v in same.label.items() if k != "size"}) \
        == theirs[0]


def test_tail_check_adds_shorter_and_longer_runs_to_table1s():
    tail = get("demarchi-tail").requests("smoke", "gem5")
    figures = get("demarchi-table1").requests("smoke", "gem5")
    assert sorted(r.jobs[0].size for r in tail) == ["sim", "sim", "sim_long", "sim_long",
                                                    "smoke", "smoke"]
    assert {(r.machine, r.label["rep"]) for r in tail} == {("xeon-e5440-2core", 0)}
    assert {r.policy for r in tail} == {"vanilla", "task-affinity"}
    # Its 1500-sample runs are Table I's, made once for both.
    assert [r for r in tail if r.jobs[0].size == "sim_long"] == \
        [r for r in figures if r.machine == "xeon-e5440-2core" and r.label["rep"] == 0]


def test_halving_compares_the_first_half_of_every_run(tmp_path):
    import subprocess

    import pandas as pd

    from schedlab.analysis import mixer
    from schedlab.analysis.demarchi import halving
    from schedlab.guest import programs
    rows = []
    for rep in (0, 1):   # two real native runs of the mixer
        out = tmp_path / str(rep)
        subprocess.run([str(programs.binary("mixer")), "--out", str(out), "--sched", "other",
                        "--samples", "401"], check=True, capture_output=True, timeout=60)
        run = mixer.load(out)
        rows += [{"run_id": f"r{rep}", "system": "A", "cores": 4, "policy": "vanilla",
                  "sample": n, "production_ns": run.production_ns[n - 1] if n else None}
                 for n in range(run.samples)]
    samples = pd.DataFrame(rows)
    (h,) = halving(samples).to_dict("records")
    assert h["n (all)"] == 2 * 400 and h["n (first half)"] == 2 * 200
    first = samples[samples["sample"] <= 200]["production_ns"].dropna()
    assert h["mu_us (first half)"] == pytest.approx(first.mean() / 1e3)
    assert h["rho_us (all)"] == pytest.approx(
        (samples["production_ns"].mean() + 2 * samples["production_ns"].std()) / 1e3)
    assert h["mu_us change %"] == pytest.approx(
        100 * (h["mu_us (first half)"] / h["mu_us (all)"] - 1))


def test_fig3_maps_samples_where_every_task_read_its_cpu_and_falls_back_to_the_trace():
    import pandas as pd

    from schedlab.analysis import mixer
    from schedlab.analysis.demarchi import _per_sample_cpus
    rows = [{"system": "A", "cores": 4, "policy": p, "rep": rep, "sample": n,
             **{f"cpu_{t}": (n + rep) % 4 for t in mixer.TASKS}}
            for p in ("vanilla", "task-affinity") for rep in (1, 2) for n in range(5)]
    samples = pd.DataFrame(rows)
    first = _per_sample_cpus(samples)
    assert set(first["rep"]) == {1} and len(first) == 2 * 5
    # A run made on a kernel without rseq has no per-sample map: the trace's view instead.
    samples.loc[3, "cpu_mixer1"] = None
    assert _per_sample_cpus(samples) is None
    assert _per_sample_cpus(samples.drop(columns=["cpu_wave0"]).dropna()) is None


def test_tail_table_cuts_each_run_at_every_shorter_run_length():
    import pandas as pd

    from schedlab.analysis.demarchi import tail_table
    lengths = {"short": 4, "mid": 10, "long": 20}
    frame = pd.DataFrame([{"run_id": r, "samples": n} for r, n in lengths.items()])
    samples = pd.DataFrame([{"run_id": r, "policy": "vanilla", "sample": i,
                             "production_ns": None if i == 0 else 1000.0 * i}
                            for r, n in lengths.items() for i in range(n)])
    t = tail_table(frame, samples)
    parts = {n: list(t[t["run samples"] == n]["part"]) for n in lengths.values()}
    assert sorted(parts[4]) == ["all", "first half"]
    assert sorted(parts[10]) == ["all", "first 4", "first half"]
    assert sorted(parts[20]) == ["all", "first 4", "first half"]     # its half: 10
    # What a shorter run saw of the same timeline: samples 1 .. cut-1.
    (first4,) = t[(t["run samples"] == 20) & (t["part"] == "first 4")].to_dict("records")
    assert first4["n"] == 3 and first4["mu_us"] == 2.0 and first4["max_us"] == 3.0


@pytest.mark.parametrize("name", ["demarchi-table1", "demarchi-tail", "demarchi-idle"])
def test_what_is_reduced_names_every_runs_sample_count(name):
    from schedlab.guest import workloads
    e = get(name)
    program = workloads.get("mixer")
    reduced = e.reductions["smoke"]
    counts = {program.expect(r.jobs[0].size)["samples"] for r in e.requests("smoke", "gem5")}
    listed = {int(n.replace(",", "")) for n in
              reduced.split(" samples per run")[0].replace(" and ", ", ").split(", ")}
    assert listed == counts
    assert "paper: 150,000" in reduced
