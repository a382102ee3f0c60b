"""How much does a figure's headline metric move between repetitions that differ only in
the guest's seed?

Takes the requests of one experiment that match ``--only`` (label coordinates, as
``reproduce --only`` takes them; give ``rep=0`` to hold everything else a definition varies
between repetitions), runs each with guest seeds 0 .. N-1 (RunRequest.seed: the guest's
random generator after the restore, and gem5's), collects them as the figure does, and
records per condition the metric's mean, standard deviation, coefficient of variation and
range over the seeds, and, between two conditions, the difference of the means against the
seeds' spread. gem5 is deterministic, so this is the variability that a figure's repetitions
sample (Alameldeen and Wood, HPCA 2003: space variability); bench/reproducibility.md keeps
the table.

    GEM5=/path/to/gem5.fast ~/.cache/schedlab/venv/*/bin/python bench/bench_variability.py \
        kazempour-fig2 --only benchmark=gzip,rep=0 --seeds 5 \
        --json bench/results/variability.json
    ~/.cache/schedlab/venv/*/bin/python bench/bench_variability.py --report \
        bench/results/variability.json
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import (add_run_selection, head_commit, record_parser,  # noqa: E402
                           report_or_measure)


def measure(name: str, only: list[str], seeds: int, metric: str | None, jobs: int,
            run: bool = True) -> dict:
    from schedlab.campaigns import reproduce as R
    from schedlab.campaigns.experiment import get
    from schedlab.campaigns.verify import parse_only, select
    experiment = get(name)
    metric = metric or experiment.metric
    chosen = select(name, experiment.requests("smoke", "gem5"), parse_only(only))
    requests = [dataclasses.replace(r, seed=s, label={**r.label, "guest_seed": s})
                for r in chosen for s in range(seeds)]
    started = time.monotonic()
    if run:
        dirs = R.run_requests(requests, f"variability-{name}", jobs, "local", print,
                              {}).run_dirs()
    else:        # --collect: the runs finished so far (a campaign stopped before its end)
        dirs = R.finished_runs(R.run_dirs(requests))
        if not dirs:
            sys.exit("no finished runs of these requests in the results store yet")
    tables = R.collect(experiment, dirs)
    main = tables[""]
    if metric not in main:
        sys.exit(f"{name}'s table has no column {metric}; give --metric (one of "
                 f"{', '.join(c for c in main.columns if c.startswith(('task_', 'gem5_')))})")
    keys = [k for k in chosen[0].label if k in main.columns and k != "guest_seed"]
    conditions = []
    for values, group in main.groupby(keys, sort=False, dropna=False):
        per_seed = group.groupby("guest_seed")[metric].mean()
        mean, sd = float(per_seed.mean()), float(per_seed.std(ddof=1))
        conditions.append({"condition": dict(zip(keys, map(str, values))), "n": len(per_seed),
                           "mean": mean, "sd": sd, "cv": sd / mean if mean else math.nan,
                           "min": float(per_seed.min()), "max": float(per_seed.max()),
                           "values": [float(v) for v in per_seed]})
    commit = head_commit()
    # Provenance: which runs, made with which gem5 and guest (the run directories stay in
    # the results store only).
    prov = [c for c in ("run_id", "gem5_hash", "gem5_config", "kernel", "image",
                        "vmlinux_sha", "workloads_sha", "gem5_host_s", "gem5_cpu_s")
            if c in main]
    runs = main.drop_duplicates("run_id")[["guest_seed", *keys, *prov]]
    return {"experiment": name, "only": only, "metric": metric, "seeds": seeds,
            "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "host_seconds": round(time.monotonic() - started) if run else None,
            "conditions": conditions,
            "runs": json.loads(runs.to_json(orient="records"))}


def table(records: list[dict]) -> str:
    lines = ["| experiment | condition | metric | n seeds | mean | sd | CV | range |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        for c in r["conditions"]:
            cond = ", ".join(f"{k}={v}" for k, v in c["condition"].items())
            lines.append(f"| {r['experiment']} | {cond} | {r['metric']} | {c['n']} | "
                         f"{c['mean']:.4g} | {c['sd']:.3g} | {100 * c['cv']:.2f} % | "
                         f"{c['min']:.4g} - {c['max']:.4g} |")
        if len(r["conditions"]) == 2:
            a, b = r["conditions"]
            pooled = math.sqrt((a["sd"] ** 2 + b["sd"] ** 2) / 2)
            diff = b["mean"] - a["mean"]
            lines.append(f"| {r['experiment']} | difference of the two | {r['metric']} | | "
                         f"{diff:.4g} ({100 * diff / a['mean']:+.2f} %) | pooled sd "
                         f"{pooled:.3g} | {abs(diff) / pooled if pooled else math.inf:.1f} "
                         f"pooled sd | |")
    return "\n".join(lines)


def main() -> None:
    parser = record_parser(__doc__)
    add_run_selection(parser)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--metric", default=None, help="default: the experiment's own")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--collect", action="store_true",
                        help="run nothing: record the runs of these requests finished so far")
    args = parser.parse_args()
    if args.report is None and (not args.experiment or not args.only or args.seeds < 2):
        parser.error("give an experiment, --only coordinates and --seeds of at least 2")
    report_or_measure(args, table, lambda: measure(args.experiment, args.only, args.seeds,
                                                   args.metric, args.jobs,
                                                   run=not args.collect))


if __name__ == "__main__":
    main()
