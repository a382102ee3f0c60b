"""The re-make's real cost against its plan's price, per study (issue 53, item 4).

The plan (docs/remake.md, "Order") priced each experiment's new runs in host hours, one run
at a time, before the first run. This reads what has been committed since: every run of the
plan's experiments in a committed table (full or ``partial/``) whose run id today's tree
computes, counted once at the first step that makes it, and adds up its gem5 CPU time
(``gem5_cpu_s``, the plan's unit) and its wall time beside the other run (``gem5_host_s``).
Per study: the plan's price for exactly the runs made (their step's price per new run), what
they took, the ratio, and the study's whole price scaled by it.

    ~/.cache/schedlab/venv/*/bin/python bench/bench_remake_cost.py \
        --json bench/results/remake-cost.json
    ~/.cache/schedlab/venv/*/bin/python bench/bench_remake_cost.py --report \
        bench/results/remake-cost.json
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import head_commit, record_parser, report_or_measure  # noqa: E402

PLAN = Path(__file__).resolve().parent.parent / "docs" / "remake.md"


def planned_steps(text: str) -> list[dict]:
    """The plan's steps as docs/remake.md committed them: experiment, new runs, host hours."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| # | experiment |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    steps = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        row = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
        steps.append({"experiment": row["experiment"], "new_runs": int(row["new runs"]),
                      "hours": float(row["host hours"])})
    return steps


def made_runs(experiment_name: str):
    """One row per run of the experiment's committed tables (full and partial) whose run id
    today's tree computes: run_id, gem5_cpu_s, gem5_host_s."""
    import pandas as pd

    from schedlab.campaigns.currency import todays_run_ids
    from schedlab.campaigns.experiment import Scale, registry
    from schedlab.campaigns.locations import carried_paths, table_paths
    experiment = registry()[experiment_name]
    tables = [p for p in (table_paths(experiment, Scale.SMOKE, "gem5")[""],
                          carried_paths(experiment, Scale.SMOKE, "gem5")[""]) if p.is_file()]
    if not tables:
        return pd.DataFrame(columns=["run_id", "gem5_cpu_s", "gem5_host_s"])
    # Tables made before gem5's CPU time was recorded have no gem5_cpu_s: none of their
    # runs is current anyway.
    wanted = {"run_id", "gem5_cpu_s", "gem5_host_s"}
    rows = pd.concat([pd.read_csv(p, usecols=lambda c: c in wanted) for p in tables])
    current = todays_run_ids(experiment, Scale.SMOKE, "gem5")
    return rows[rows.run_id.isin(current)].drop_duplicates("run_id")


def measure(plan: Path = PLAN) -> dict:
    from schedlab.campaigns.experiment import registry
    defined = registry()
    studies: dict[str, dict] = {}
    counted: set[str] = set()
    for step in planned_steps(plan.read_text()):
        study = defined[step["experiment"]].study
        mine = studies.setdefault(study, {"planned_hours": 0.0, "planned_runs": 0, "runs": 0,
                                          "price_of_runs_made": 0.0, "cpu_hours": 0.0,
                                          "wall_hours": 0.0})
        mine["planned_hours"] += step["hours"]
        mine["planned_runs"] += step["new_runs"]
        runs = made_runs(step["experiment"])
        runs = runs[~runs.run_id.isin(counted)]
        counted.update(runs.run_id)
        if step["new_runs"] and len(runs):
            mine["runs"] += len(runs)
            mine["price_of_runs_made"] += step["hours"] / step["new_runs"] * len(runs)
            mine["cpu_hours"] += float(runs.gem5_cpu_s.sum()) / 3600
            mine["wall_hours"] += float(runs.gem5_host_s.sum()) / 3600
    return {"date": time.strftime("%Y-%m-%d"), "commit": head_commit(),
            "studies": {k: {n: round(v, 2) if isinstance(v, float) else v
                            for n, v in s.items()} for k, s in studies.items()}}


def table(records: list[dict]) -> str:
    lines = ["| date | commit | study | runs made / planned | planned price of those runs (h) "
             "| gem5 CPU (h) | ratio | study's price (h) | scaled by the ratio (h) "
             "| wall beside another run (h) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        for study, s in r["studies"].items():
            ratio = s["cpu_hours"] / s["price_of_runs_made"] if s["price_of_runs_made"] else None
            scaled = f"{s['planned_hours'] * ratio:.1f}" if ratio else "-"
            lines.append(
                f"| {r['date']} | {r['commit']} | {study} | {s['runs']} / {s['planned_runs']} | "
                f"{s['price_of_runs_made']:.1f} | {s['cpu_hours']:.1f} | "
                f"{f'{ratio:.2f}' if ratio else '-'} | {s['planned_hours']:.1f} | {scaled} | "
                f"{s['wall_hours']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = record_parser(__doc__)
    report_or_measure(parser.parse_args(), table, measure)


if __name__ == "__main__":
    main()
