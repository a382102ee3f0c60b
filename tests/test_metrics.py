"""The studies' change intervals: honest with the few repetitions a condition has."""


def test_the_change_interval_covers_the_true_change_with_two_or_three_runs():
    # Two conditions with no true difference (normal runs, sd 3 % of the mean), n runs each:
    # a 95 % interval must contain 0 in about 95 % of draws. A percentile bootstrap of the
    # runs covered it in 70 % (n = 2) and 82 % (n = 3) of the same draws.
    import numpy as np
    from schedlab.analysis.metrics import change_with_ci
    rng = np.random.default_rng(7)
    for n in (2, 3):
        draws = [change_with_ci(rng.normal(100, 3, n), rng.normal(100, 3, n))
                 for _ in range(400)]
        covered = sum(low <= 0 <= high for _, low, high in draws) / len(draws)
        assert covered >= 0.92, (n, covered)


def test_the_change_interval_with_one_run_or_identical_runs():
    import math
    from schedlab.analysis.metrics import change_with_ci
    change, low, high = change_with_ci([1.0], [1.1, 1.2])
    assert round(change, 6) == 15.0 and math.isnan(low) and math.isnan(high)
    assert change_with_ci([2.0, 2.0], [3.0, 3.0]) == (50.0, 50.0, 50.0)
    # Welch by hand: difference of means 1.0; each side's variance 0.02 (sample, n - 1) over
    # 2 runs, so the standard error is sqrt(0.01 + 0.01) = 0.14142 on 2.0 degrees of freedom
    # (Welch-Satterthwaite), t(2, 0.975) = 4.3027: half-width 0.60849, over the base mean 2.
    change, low, high = change_with_ci([1.9, 2.1], [2.9, 3.1])
    assert round(change, 4) == 50.0
    assert round(low, 2) == round(100 * (1.0 - 0.60849) / 2.0, 2) == 19.58
    assert round(high, 2) == round(100 * (1.0 + 0.60849) / 2.0, 2) == 80.42
