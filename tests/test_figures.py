"""schedlab.analysis.figures: the whiskers every bar figure draws (mean ± 2 sd)."""

from __future__ import annotations

import pandas as pd
import pytest

from schedlab.analysis.figures import condition_stats, whiskers


def test_a_quantity_that_cannot_be_negative_has_no_whisker_below_zero():
    # Two runs of a rate, 1 and 9: mean 5, sd 5.66, so mean - 2 sd = -6.3, which no run can
    # reach; the lower whisker stops at zero (5), the upper one is 2 sd (11.3).
    rates = pd.DataFrame({"cond": ["a", "a", "b", "b"], "rate": [1.0, 9.0, 4.0, 6.0]})
    stats = condition_stats(rates, "rate", ["cond"])
    lower, upper = whiskers(stats)
    assert list(lower) == pytest.approx([5.0, 2 * 1.41421356])
    assert list(upper) == pytest.approx([2 * 5.65685425, 2 * 1.41421356])
    # A change in % can be negative: both whiskers are 2 sd.
    changes = rates.assign(rate=[-4.0, 9.0, 4.0, 6.0])
    lower, upper = whiskers(condition_stats(changes, "rate", ["cond"]))
    assert list(lower) == pytest.approx(list(upper))
