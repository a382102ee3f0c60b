"""Do two trees simulate the same thing? A run made by an earlier tree, made again by this
one, compared in every simulated column (issue 49: the refactors change no simulated number).

The earlier run comes from a results store that tree wrote (``--before``), found by its
label (and guest seed 0); this tree makes the same request in a store of its own (nothing
is reused) and both are collected as the figure collects its runs. Their run ids may differ
(an input that names the kernel's patches by file changed, say) while the built guest is
byte-identical: the record says which inputs and artefacts differ, and which simulated
columns do.

    GEM5=/path/to/gem5.fast ~/.cache/schedlab/venv/*/bin/python bench/bench_same_numbers.py \
        kazempour-fig2 --only benchmark=art,bv=bv_0,rep=0 --before /work/results-var \
        --json bench/results/same-numbers.json
    ~/.cache/schedlab/venv/*/bin/python bench/bench_same_numbers.py --report \
        bench/results/same-numbers.json
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.records import (add_run_selection, head_commit, record_parser,  # noqa: E402
                           report_or_measure)

# Columns that name inputs or the host rather than what was simulated: reported, not compared.
INPUTS = ("run_id", "kernel", "image", "gem5_config", "work_key", "gem5_host_s", "gem5_cpu_s",
          "guest_seed")


def before_run(store: Path, label: dict) -> Path:
    """The run of ``store`` whose label holds ``label`` at guest seed 0 (the newest, where
    the store kept runs of several earlier trees)."""
    found = []
    for spec in store.glob("*/spec.json"):
        if not (spec.parent / "results.json").is_file():
            continue
        request = json.loads(spec.read_text()).get("request", {})
        theirs = request.get("label", {})
        if (all(str(theirs.get(k)) == str(v) for k, v in label.items())
                and int(theirs.get("guest_seed", 0)) == 0 and int(request.get("seed", 0)) == 0):
            found.append(spec.parent)
    if not found:
        sys.exit(f"{store}: no finished run with label {label} at seed 0")
    return max(found, key=lambda d: (d / "results.json").stat().st_mtime)


def measure(name: str, only: list[str], before: Path, jobs: int) -> dict:
    from schedlab.campaigns import reproduce as R
    from schedlab.campaigns.experiment import get
    from schedlab.campaigns.verify import parse_only, results_store, select
    experiment = get(name)
    chosen = select(name, experiment.requests("smoke", "gem5"), parse_only(only))
    if len(chosen) != 1:
        sys.exit(f"--only chooses {len(chosen)} runs of {name}; choose one")
    request = chosen[0]
    earlier = before_run(before, request.label)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="same-numbers-", dir=before.parent) as tmp, \
            results_store(Path(tmp)):
        report = R.run_requests([request], f"same-numbers-{name}", jobs, "local", print, {})
        now = R.collect(experiment, report.run_dirs())[""]
        then = R.collect(experiment, [earlier])[""]
    columns = [c for c in then.columns if c in now.columns]
    compared = [c for c in columns if c not in INPUTS]
    a, b = then[compared].reset_index(drop=True), now[compared].reset_index(drop=True)
    differences = []
    if len(a) != len(b):
        differences.append(f"{len(a)} rows before, {len(b)} now")
    else:
        for c in compared:
            same = (a[c] == b[c]) | (a[c].isna() & b[c].isna())
            differences += [f"row {i}, {c}: {a[c][i]!r} before, {b[c][i]!r} now"
                            for i in same[~same].index[:3]]
    commit = head_commit()
    inputs = {c: {"before": str(then[c].iloc[0]), "now": str(now[c].iloc[0])}
              for c in INPUTS if c in then and c in now and len(then) and len(now)}
    return {"experiment": name, "only": only, "date": time.strftime("%Y-%m-%d"),
            "commit": commit, "before_store": str(before), "before_run": earlier.name,
            "rows": len(b), "columns_compared": len(compared), "identical": not differences,
            "differences": differences, "inputs": inputs,
            # Columns a backend does not record (gem5 runs: bzImage, initramfs) are NaN on
            # both sides and count as equal (the first two records said False for them).
            "artefacts_equal": {c: bool(((then[c] == now[c])
                                         | (then[c].isna() & now[c].isna())).all())
                                for c in columns if c.endswith("_sha")},
            "host_seconds": round(time.monotonic() - started)}


def table(records: list[dict]) -> str:
    lines = ["| date | commit | experiment | run (before) | rows | simulated columns | result |"
             " differing inputs |", "|---|---|---|---|---|---|---|---|"]
    for r in records:
        result = ("identical" if r["identical"]
                  else f"{len(r['differences'])} differences: " + "; ".join(r["differences"][:3]))
        inputs = ", ".join(c for c, v in r["inputs"].items() if v["before"] != v["now"])
        lines.append(f"| {r['date']} | {r['commit']} | {r['experiment']} | {r['before_run']} | "
                     f"{r['rows']} | {r['columns_compared']} | {result} | {inputs or 'none'} |")
    return "\n".join(lines)


def main() -> None:
    parser = record_parser(__doc__)
    add_run_selection(parser)
    parser.add_argument("--before", type=Path, help="the earlier tree's results store")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    if args.report is None and not (args.experiment and args.only and args.before):
        parser.error("give an experiment, --only coordinates of one run and --before STORE")
    report_or_measure(args, table, lambda: measure(args.experiment, args.only, args.before,
                                                   args.jobs))


if __name__ == "__main__":
    main()
