"""Metrics the studies report, computed from tidy tables.

- IPC = committed instructions / core cycles over a region of interest.
- MPI = misses of a cache level / committed instructions (the papers' unit; MPKI = 1000 MPI).
- rho = mu + 2 sigma of the sample production time (study 2).
- A change between two conditions is reported with a 95 % confidence interval of the
  difference of the two means (Welch's two-sample t interval, unequal variances), in % of
  the base mean. With the studies' two or three repetitions a condition, a percentile
  bootstrap of the runs covered the true change in only 70 % (n = 2) to 82 % (n = 3) of
  simulated cases (tests/test_metrics.py): too few runs to resample; the t interval widens
  with the few degrees of freedom instead.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats


def change_with_ci(base: np.ndarray, other: np.ndarray, level: float = 0.95
                   ) -> tuple[float, float, float]:
    """Relative change of the mean of ``other`` over the mean of ``base`` (%), and the
    ``level`` confidence interval of that change: Welch's t interval of the difference of
    the means, over the base mean. NaN bounds with fewer than two runs on a side (no
    spread, no interval); runs that agree exactly give a zero-width interval."""
    base, other = np.asarray(base, float), np.asarray(other, float)
    change = 100.0 * (other.mean() - base.mean()) / base.mean()
    if len(base) < 2 or len(other) < 2:
        return change, math.nan, math.nan
    # Welch: each mean's squared standard error, and the Welch-Satterthwaite degrees of
    # freedom of their sum.
    e_base, e_other = base.var(ddof=1) / len(base), other.var(ddof=1) / len(other)
    if e_base + e_other == 0:                      # runs that agree exactly
        return change, change, change
    df = (e_base + e_other) ** 2 / (e_base ** 2 / (len(base) - 1)
                                    + e_other ** 2 / (len(other) - 1))
    half = float(stats.t.ppf(0.5 + level / 2, df)) * math.sqrt(e_base + e_other)
    difference = other.mean() - base.mean()
    return (change, 100.0 * (difference - half) / base.mean(),
            100.0 * (difference + half) / base.mean())


def paired_summary(frame: pd.DataFrame, metric: str, group: str, condition: str,
                   base: str, other: str) -> pd.DataFrame:
    """Per ``group`` value: n, mean under ``base`` and ``other``, and the change with its CI."""
    rows = []
    for g, sub in frame.groupby(group, sort=False):
        a = sub[sub[condition] == base][metric].dropna().to_numpy()
        b = sub[sub[condition] == other][metric].dropna().to_numpy()
        if len(a) == 0 or len(b) == 0:
            continue
        change, lo, hi = change_with_ci(a, b)
        rows.append({group: g, "n": min(len(a), len(b)), f"{metric} {base}": a.mean(),
                     f"{metric} {other}": b.mean(), "change %": change,
                     "95% CI low %": lo, "95% CI high %": hi})
    return pd.DataFrame(rows)
