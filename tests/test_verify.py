"""Choosing runs by label (--only) and comparing re-made runs with committed rows
(--verify), schedlab.campaigns.verify; the gem5 end-to-end check is in
tests/test_gem5_verify.py."""

from __future__ import annotations

import pandas as pd
import pytest

from schedlab.campaigns import verify as V
from schedlab.campaigns.experiment import get
from schedlab.errors import UserError


def test_only_parses_coordinates_and_refuses_anything_else():
    assert V.parse_only(["policy=vanilla,rep=0", "rep=1"]) == [
        {"policy": "vanilla", "rep": "0"}, {"rep": "1"}]
    for bad in (["rep"], ["=0"], [","]):
        with pytest.raises(UserError, match="KEY=VALUE"):
            V.parse_only(bad)


def test_only_selects_by_label_and_names_what_it_cannot_find():
    requests = get("demo-affinity").requests("smoke", "gem5")
    chosen = V.select("demo-affinity", requests, [{"policy": "vanilla", "rep": "0"}])
    assert [r.label["placement"] for r in chosen] == ["pinned", "free"]
    assert {r.label["policy"] for r in chosen} == {"vanilla"}
    both = V.select("demo-affinity", requests, [{"rep": "0"}, {"rep": "1"}])
    assert len(both) == len(requests)
    with pytest.raises(UserError, match="no label coordinate benchmark; theirs are "
                                        "placement, policy, rep"):
        V.select("demo-affinity", requests, [{"benchmark": "gzip"}])
    with pytest.raises(UserError, match="no run of demo-affinity has the label rep=7"):
        V.select("demo-affinity", requests, [{"rep": "7"}])


def test_dry_run_says_which_runs_are_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    requests = get("demo-affinity").requests("smoke", "gem5")[:3]
    first = V.run_states(requests, None, set())
    ids = [run_id for _, run_id, _ in first]
    assert [what for *_, what in first] == ["to run"] * 3
    committed = pd.DataFrame({"run_id": [ids[0]]})
    states = [what for *_, what in V.run_states(requests, committed, {ids[1]})]
    assert states == ["reused: the committed table holds it",
                      "reused: carried from another host", "to run"]


def _rows(**columns):
    return pd.DataFrame({"run_id": ["a", "a", "b"], "job_rep": [0, 1, 0], **columns})


def test_a_re_made_run_is_compared_in_every_simulated_column():
    committed = _rows(ipc=[1.25, 1.5, 2.0], gem5_host_s=[10.0, 10.0, 20.0])
    same = _rows(ipc=[1.25, 1.5, 2.0], gem5_host_s=[99.0, 99.0, 1.0])  # host time may differ
    found = {"a": [], "b": []}
    assert V._compare("", same, committed, ["a", "b"], found) == 3   # run_id, job_rep, ipc
    assert found == {"a": [], "b": []}
    other = _rows(ipc=[1.25, 1.5000001, 2.0], gem5_host_s=[1.0, 1.0, 1.0])
    found = {"a": [], "b": []}
    V._compare("", other, committed, ["a", "b"], found)
    assert found["b"] == [] and len(found["a"]) == 1 and "ipc" in found["a"][0]
    short = _rows(ipc=[1.25, 1.5, 2.0]).iloc[[0, 2]]
    found = {"a": [], "b": []}
    V._compare("", short, committed, ["a"], found)
    assert "1 rows re-made, 2 committed" in found["a"][0]
    assert "column gem5_host_s" not in " ".join(found["a"])


def test_a_run_made_from_other_built_files_than_its_committed_id_is_found():
    committed = _rows(vmlinux_sha=["v1", "v1", "v1"], workloads_sha=["w1", "w1", None])
    made = pd.DataFrame({"run_id": ["a", "b", "c"], "vmlinux_sha": ["v1", "v2", "v9"],
                         "workloads_sha": ["w1", "w2", "w9"]})
    problems = V.artefact_mismatches(made, committed)
    # b's vmlinux differs; its workloads were not recorded (older rows pass); c is new.
    assert problems == ["b: vmlinux v2 here, v1 committed"]
    assert V.artefact_mismatches(made, committed.drop(columns=["vmlinux_sha"])) == []
