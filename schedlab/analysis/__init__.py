"""Analysis: from finished runs to tables, metrics and figures. Nothing here writes into a
run directory; outputs go to a figure or report directory of their own.

- ``tables``: tidy tables (one row per job repetition) from run directories.
- ``figures``: matplotlib figures drawn from those tables.
- ``mixer``: study 2's software mixer output (production times, migrations maps).
"""
