"""The re-make's plan (docs/remake.md, schedlab/campaigns/remake.py): every experiment once,
in the order of the claims it feeds, each shared run made at the first step that needs it;
the repetitions asked of a spread; and the committed plan naming today's definitions."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from schedlab.analysis.variability import Spread
from schedlab.campaigns import brecht, demarchi, kazempour, lee
from schedlab.campaigns import remake as M
from schedlab.campaigns.calibration import request_key
from schedlab.campaigns.experiment import registry

PLAN = Path(__file__).resolve().parent.parent / "docs" / "remake.md"


@pytest.fixture(scope="module")
def steps():
    return M.plan()


def test_every_experiment_once_in_the_order_of_its_claims(steps):
    names = [s.experiment for s in steps]
    assert sorted(names) == sorted(n for n, e in registry().items()
                                   if e.study in M.STUDIES and e.implemented)
    counts = [len(s.claims) for s in steps]
    assert counts == sorted(counts, reverse=True)
    # Each distinct run is made (and priced) once, at the first step that needs it.
    distinct = {request_key(r) for n in names for r in registry()[n].requests("smoke", "gem5")}
    assert sum(s.new_runs for s in steps) == len(distinct)
    by_name = {s.experiment: s for s in steps}
    assert by_name["lee-fig9"].new_runs == by_name["lee-fig9"].runs
    assert 0 < by_name["lee-overheads"].new_runs < by_name["lee-overheads"].runs
    assert all(s.hours >= 0 for s in steps) and sum(s.hours for s in steps) > 0


def _step(study, reps, cv):
    spread = Spread(f"{study}-x", "m", 5, 10, "abc1234", "2026-11-29", cv)
    return M.Step(f"{study}-x", study, (), 8, 8, 1.0, reps, spread)


def test_the_repetitions_a_spread_asks():
    # t(6) sqrt(2/4) = 1.730 sd: 2.3 % x 1.730 = 4.0 % <= 5 %; with 3, 2.266 x 2.3 = 5.2 %.
    assert _step("k", 4, 0.023).resolves == pytest.approx(0.0398, abs=1e-4)
    asked = {r.study: r for r in M.study_repetitions(
        [_step("kazempour", 4, 0.023), _step("demarchi", 5, 0.127),
         _step("lee", 2, 0.013), _step("brecht", 3, 0.0063)])}
    assert asked["kazempour"].asked == 4
    assert asked["demarchi"].asked == M.MAX_REPS       # 13 %: ten do not reach 5 %
    assert asked["lee"].asked == 3                     # 4.3 x 1.3 = 5.6 %; 2.27 x 1.3 = 2.9 %
    assert asked["brecht"].asked == 2
    assert asked["brecht"].hours_asked == pytest.approx(1.0 * 2 / 3)


def _table_rows(text: str, header_start: str) -> list[list[str]]:
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_the_committed_plan_names_today_s_definitions(steps):
    text = PLAN.read_text()
    planned = _table_rows(text, "| # | experiment |")
    assert [(r[1], int(r[3]), int(r[4]), int(r[5])) for r in planned] == \
        [(s.experiment, s.runs, s.new_runs, s.repetitions) for s in steps], \
        "docs/remake.md's plan differs from today's definitions: run.py reproduce --plan"
    studies = {r[0]: int(r[5]) for r in _table_rows(text, "| study |")}
    assert studies == {"kazempour": kazempour.REPS["smoke"], "demarchi": demarchi.REPS["smoke"],
                       "lee": lee.REPS["smoke"], "brecht": brecht.REPS["smoke"]}
    # The price is the snapshot taken before the first run: committed re-made runs
    # re-calibrate today's model, so the plan is held to its own columns, and its real cost
    # is recorded beside it (bench/bench_remake_cost.py).
    hours = [float(r[8]) for r in planned]
    assert float(planned[-1][9]) == pytest.approx(sum(hours), abs=0.05 * len(hours))  # rounding
    total = float(re.search(r"Planned: \*\*(\d+) host hours\*\*", text)[1])
    assert total == pytest.approx(round(sum(hours)), abs=0.5)


def test_the_cost_record_counts_each_committed_run_once_at_its_first_step(monkeypatch,
                                                                          tmp_path):
    """bench_remake_cost: a run two steps share (demarchi-table1 and -fig3) is priced at the
    first step that makes it, and only runs whose ids today's tree computes count."""
    import pandas as pd

    sys.path.insert(0, str(PLAN.parent.parent))
    from bench import bench_remake_cost as cost
    plan = tmp_path / "remake.md"
    plan.write_text("| # | experiment | claims | runs | new runs | repetitions | spread | resolves "
            "| host hours | total |\n|---|---|---|---|---|---|---|---|---|---|\n"
            "| 1 | demarchi-table1 | D1 | 40 | 40 | 5 | - | - | 8.0 | 8.0 |\n"
            "| 2 | demarchi-fig3 | D5 | 20 | 0 | 5 | - | - | 0.0 | 8.0 |\n")
    made = {"demarchi-table1": pd.DataFrame({"run_id": ["a", "b"], "gem5_cpu_s": [1800.0, 1800.0],
                                             "gem5_host_s": [3600.0, 3600.0]}),
            "demarchi-fig3": pd.DataFrame({"run_id": ["a"], "gem5_cpu_s": [1800.0],
                                           "gem5_host_s": [3600.0]})}
    monkeypatch.setattr(cost, "made_runs", made.__getitem__)
    record = cost.measure(plan)
    demarchi = record["studies"]["demarchi"]
    assert demarchi["runs"] == 2 and demarchi["planned_runs"] == 40
    assert demarchi["price_of_runs_made"] == pytest.approx(0.4)       # 8 h / 40 runs x 2
    assert demarchi["cpu_hours"] == pytest.approx(1.0)
    assert "| demarchi | 2 / 40 | 0.4 | 1.0 | 2.50 | 8.0 | 20.0 | 2.0 |" in cost.table([record])
