"""A gem5 figure's caption states the spread between guest seeds that its study's bench record
measured, its repetitions, and the smallest difference of two bars they resolve."""

import json
import math

import pytest

from schedlab.analysis import variability as V
from schedlab.campaigns import reproduce as R
from schedlab.errors import UserError

STUDIES = {"kazempour-fig2": "kazempour", "kazempour-fig3": "kazempour",
           "lee-fig18-23": "lee"}


def study_of(name):
    if name not in STUDIES:
        raise UserError(f"unknown figure {name!r}")
    return STUDIES[name]


def record(experiment, metric, sds, means, seeds=5, date="2026-11-29"):
    return {"experiment": experiment, "metric": metric, "seeds": seeds, "commit": "abc1234",
            "date": date, "conditions": [{"n": seeds, "sd": sd, "mean": m}
                                         for sd, m in zip(sds, means)]}


def test_the_resolvable_difference_is_the_two_sample_t_bound():
    # t(8, 0.975) = 2.306, t(2, 0.975) = 4.303 (tables of Student's t).
    assert V.resolvable_sd(5) == pytest.approx(2.306 * math.sqrt(2 / 5), rel=1e-3)
    assert V.resolvable_sd(2) == pytest.approx(4.303, rel=1e-3)
    assert math.isinf(V.resolvable_sd(1))


def test_a_figure_takes_its_own_record_else_its_study_s(tmp_path):
    (tmp_path / "variability-a.json").write_text(json.dumps([
        record("kazempour-fig2", "task_ipc", [0.03, 0.04], [1.0, 1.0]),
        record("kazempour-fig2", "task_l1i_mpi", [1e-5, 1e-5], [3e-4, 3e-4]),
        record("gone-fig9", "task_ipc", [9, 9], [1, 1]),   # since removed: skipped
    ]))
    own = V.spread_for("kazempour", "kazempour-fig2", "task_l1i_mpi", study_of, tmp_path)
    assert own.metric == "task_l1i_mpi"
    sibling = V.spread_for("kazempour", "kazempour-fig3", "task_ipc", study_of, tmp_path)
    assert sibling.experiment == "kazempour-fig2" and sibling.metric == "task_ipc"
    # pooled sd sqrt((0.03² + 0.04²) / 2) over the mean 1.0
    assert sibling.pooled_cv == pytest.approx(math.sqrt(0.00125))
    assert sibling.runs == 10
    assert V.spread_for("brecht", "brecht-fig3", "task_ipc", study_of, tmp_path) is None


def test_a_figure_borrowing_another_metric_s_spread_takes_the_most_variable(tmp_path):
    # lee-fig18-23 measured on task_ipc (CV 1 %) and on LLC misses (CV 20 %, the older
    # record): a figure of the study on a third metric borrows the 20 %, not the latest.
    (tmp_path / "variability-a.json").write_text(json.dumps([
        record("lee-fig18-23", "task_llc_mpki", [0.2, 0.2], [1.0, 1.0], date="2026-11-28"),
        record("lee-fig18-23", "task_ipc", [0.01, 0.01], [1.0, 1.0], date="2026-11-29"),
    ]))
    borrowed = V.spread_for("lee", "lee-fig18-23", "roi_p99_ms", study_of, tmp_path)
    assert borrowed.metric == "task_llc_mpki"
    assert borrowed.pooled_cv == pytest.approx(0.2)
    # Its own metric's record is still taken when there is one, however small.
    assert V.spread_for("lee", "lee-fig18-23", "task_ipc", study_of, tmp_path).metric \
        == "task_ipc"


def test_the_caption_says_spread_repetitions_and_resolvable_effect():
    spread = V.Spread("kazempour-fig2", "task_ipc", 5, 10, "abc1234", "2026-11-29", 0.02)
    text = V.caption_note(spread, "task_ipc", 2)
    assert "over 5 guest seeds a condition, kazempour-fig2's task_ipc moved by 2 %" in text
    assert "10 gem5 runs at abc1234" in text
    # 4.3 pooled sd of 2 %: 8.6 %
    assert "With 2 repetitions a bar, two bars must differ by more than 4.3 sd (about 8.6 %" \
        in text
    assert "measured on task_ipc, not this figure's task_llc_mpi" in V.caption_note(
        spread, "task_llc_mpi", 2)
    assert "no difference between bars is a direction" in V.caption_note(spread, "task_ipc", 1)
    assert "not measured for this study yet" in V.caption_note(None, "task_ipc", 2)


def test_committed_records_speak_for_study_1_and_3_figures():
    # The committed bench records (bench/results/variability-*.json) reach the captions.
    import pandas as pd
    from schedlab.campaigns.experiment import get
    for name in ("kazempour-fig2", "lee-fig18-23"):
        note = R.variability_note(get(name), pd.DataFrame({"rep": [0, 1, 0, 1]}))
        assert "guest seeds a condition" in note and "With 2 repetitions a bar" in note


def test_a_record_of_a_stopped_campaign_counts_the_seeds_that_finished():
    stopped = record("demarchi-fig3", "mean_ns", [32.0], [18190.0], seeds=3)
    stopped["conditions"][0]["n"] = 2            # asked for 3 seeds, 2 finished
    assert V.Spread.of(stopped).seeds == 2 and V.Spread.of(stopped).runs == 2
