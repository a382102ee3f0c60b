"""Whether a committed table is what today's tree makes (schedlab.campaigns.currency), and
that every stale table says so in its study's data/<study>/README.md."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from schedlab.analysis.store import DATA
from schedlab.campaigns.currency import currency, todays_run_ids
from schedlab.campaigns.experiment import get, registry
from schedlab.campaigns.locations import table_paths

# "- stale: `<table file>` ..." lines of a study README's "Currency" section.
STALE_LINE = re.compile(r"^- stale: `([^`]+)`", re.MULTILINE)


def _committed():
    for name, e in registry().items():
        if e.implemented:
            path = table_paths(e, "smoke", "gem5")[""]
            if path.is_file():
                yield e, path


def test_a_table_of_todays_run_ids_is_current_and_one_other_id_makes_it_stale(tmp_path):
    experiment = get("demo-affinity")
    today = sorted(todays_run_ids(experiment, "smoke", "gem5"))
    assert len(today) == len(experiment.requests("smoke", "gem5"))
    table = tmp_path / "t.csv"
    pd.DataFrame({"run_id": today * 2, "job": range(2 * len(today))}).to_csv(table,
                                                                            index=False)
    ours = currency(experiment, table, "smoke", "gem5")
    assert ours.current and ours.runs == len(today) and ours.describe().startswith("current")
    pd.DataFrame({"run_id": [*today[1:], "clovertown-e5320--memlat--0123456789ab"]}).to_csv(
        table, index=False)
    older = currency(experiment, table, "smoke", "gem5")
    assert not older.current and older.current_runs == len(today) - 1
    assert older.describe().startswith(f"stale: today's tree computes the run ids of "
                                       f"{len(today) - 1} of its {len(today)} runs")


def test_a_table_without_run_ids_is_stale(tmp_path):
    table = tmp_path / "t.csv"
    pd.DataFrame({"job": [1, 2]}).to_csv(table, index=False)
    standing = currency(get("demo-affinity"), table, "smoke", "gem5")
    assert not standing.current and standing.describe().startswith("stale: it records no")


def test_run_ids_need_no_build(tmp_path, monkeypatch):
    # A fresh cache: today's ids are computed from build keys, nothing is built.
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path))
    ids = todays_run_ids(get("demo-affinity"), "smoke", "gem5")
    assert ids and not any((tmp_path / d).exists() for d in ("kernel", "image", "workloads"))


def test_every_stale_committed_table_is_named_stale_in_its_readme():
    wrong = []
    for experiment, path in _committed():
        readme = DATA / experiment.study / "README.md"
        named = set(STALE_LINE.findall(readme.read_text())) if readme.is_file() else set()
        standing = currency(experiment, path, "smoke", "gem5")
        if not standing.current and path.name not in named:
            wrong.append(f"{path.name} is stale ({standing.describe()}) but {readme} does "
                         f"not name it under '- stale:'")
        if standing.current and path.name in named:
            wrong.append(f"{path.name} is current but {readme} names it stale")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("study", sorted({e.study for e, _ in _committed()}))
def test_a_stale_line_names_a_committed_table(study):
    readme = DATA / study / "README.md"
    for name in STALE_LINE.findall(readme.read_text()):
        assert (DATA / study / name).is_file(), name
