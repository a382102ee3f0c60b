"""``run.py reproduce FIGURE``: from an experiment definition to its figure.

1. Expand the experiment at the scale into run requests (``experiment``).
2. If the backend can run here (QEMU always; gem5 when ``GEM5`` is set), run what is not
   finished yet, on this host or as a SLURM job array; else take the experiment's
   committed tables (``data/<study>/``).
3. Gather the runs into the experiment's compact tables; gem5 ones are written to
   ``data/<study>/`` (to be committed), QEMU ones to ``results/tables/``.
4. Draw the figure into ``results/figures/<name>--<scale>--<backend>.png``, with a JSON
   sidecar (caption, provenance, data) that ``run.py report`` reads.

``--partial`` (source "partial") skips 2: it gathers the runs finished so far in the
results store into ``results/tables/`` and draws ``...--partial.png``, the count of runs
on the caption, while a campaign runs or after one was interrupted. With ``--carry`` it
also keeps them under ``data/<study>/partial/`` (``carried``), to be committed: a later
campaign of the same code on any host counts them as done, and runs only the others.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from schedlab.backends.backend import BackendName
from schedlab import paths
from schedlab.analysis.figures import FigureContext, provenance
from schedlab.analysis.placement import program_names
from schedlab.analysis.store import (load_committed, save_committed,
                                     update_store)
from schedlab.analysis.tables import table
from schedlab.analysis.variability import caption_note, spread_for
from schedlab.campaigns import carried
from schedlab.campaigns.cost import campaign_host_hours, run_host_seconds, unmeasured
from schedlab.campaigns.currency import currency
from schedlab.campaigns.verify import (artefact_mismatches, label_of, run_states, select,
                                       verify)
from schedlab.campaigns.calibration import (committed_runs, estimated_hours,
                                            measured_run_seconds, request_key,
                                            run_seconds_estimate, study_calibration)
from schedlab.campaigns.experiment import Experiment, get, runnable
from schedlab.campaigns.locations import (carried_paths, figures_dir, partial_paths,
                                          reading_path, table_paths)
from schedlab.campaigns.local import error_line, logs_dir
from schedlab.errors import UserError
from schedlab.store import write_atomic

Say = Callable[[str], None]


@dataclass
class Reproduced:
    figure: Path
    sidecar: Path
    source: str
    runs: int


def can_run(backend: str) -> bool:
    return backend == BackendName.QEMU or bool(os.environ.get("GEM5"))


def run_dirs(requests) -> list[Path]:
    """The requests' run directories, their ids as the campaign computes them (kernel,
    image and programs are built if missing)."""
    from schedlab.runs import prepare
    return [prepare(r, progress=lambda s: None).dir for r in requests]


def finished_runs(dirs: list[Path]) -> list[Path]:
    """The run directories that have finished in the results store, ok or with problems,
    as a campaign's report counts them."""
    from schedlab.campaigns.plan import finished_state
    return [d for d in dirs if finished_state(d) in ("done", "problems")]


def carried_runs(experiment: Experiment, scale: str, backend: str, dirs: list[Path],
                 say: Say) -> tuple[carried.Carried, dict[str, Path]]:
    """The experiment's runs carried from another host that this checkout and gem5 binary
    would make (``dirs``: its requests' run directories), and where the carried tables
    are."""
    where = carried_paths(experiment, scale, backend)
    if not where[""].is_file():
        return carried.Carried(), where
    gem5_hash = None
    if backend == BackendName.GEM5 and can_run(backend):   # --partial needs no gem5: ids decide
        from schedlab.backends.gem5.binary import probe
        gem5_hash = probe().hash
    found = carried.load(where, {d.name for d in dirs}, gem5_hash, say)
    if found.run_ids:
        say(f"{experiment.name}: {len(found.run_ids)} of its {len(dirs)} runs carried "
            f"from {where['']}")
    return found, where


def collect(experiment: Experiment, run_dirs: list[Path]) -> dict[str, pd.DataFrame]:
    if experiment.analysis.collect is not None:
        return experiment.analysis.collect(run_dirs)
    return {"": table(run_dirs)}


def describe(experiment: Experiment, scale: str, backend: str) -> list[str]:
    """What a --dry-run prints."""
    requests = experiment.requests(scale, backend)
    measured = measured_run_seconds(experiment) if backend == BackendName.GEM5 else None
    # Found once: only an experiment without committed runs of its own needs it.
    calibration = (study_calibration(experiment.study)
                   if backend == BackendName.GEM5 and not measured else None)
    hours, how = (estimated_hours(experiment, scale, calibration) if backend == BackendName.GEM5
                  else (campaign_host_hours(requests), "model"))
    lines = [f"{experiment.name}: {experiment.title}",
             f"  {len(requests)} runs at {scale} scale on {backend}, estimated "
             + (f"{hours:.1f} host hours (one run at a time; {how})" if hours == hours
                else "host time unknown"),
             f"  repetitions differ in {experiment.repetition}"]
    if how == "study":
        lines.append(f"  calibrated: no committed runs of its own; {calibration.describe()}")
    if measured:
        lines.append(f"  measured: its {measured[0]} committed smoke runs took a median of "
                     f"{measured[1] / 60:.1f} min of gem5 host time each (its CPU time where "
                     f"recorded, else the wall clock on the host that ran them, shared with "
                     f"other work); a smoke run is priced by its own committed run")
    other = committed_runs(experiment)[1] if backend == BackendName.GEM5 else 0
    if other:
        lines.append(f"  not counted: {other} committed smoke runs of an earlier definition "
                     f"(other work than today's requests ask for)")
    kept = carried_paths(experiment, scale, backend)[""]
    if kept.is_file():
        done = sum(carried.labelled(kept, requests))
        lines.append(f"  carried: {done} of them in {kept} (matched by label here; the "
                     f"campaign checks their run ids), {len(requests) - done} to run"
                     + (f", about {hours * (len(requests) - done) / len(requests):.1f} "
                        f"host hours" if hours == hours else ""))
    if experiment.reductions.get(scale):
        lines.append(f"  reduced: {experiment.reductions[scale]}")
    guessed = unmeasured(requests)
    if guessed:
        lines.append(f"  no benchmark record for {', '.join(sorted(guessed))} in bench/: "
                     f"measure one run first (bench/bench_gem5.py)")
    if not experiment.implemented:
        lines.append(f"  not runnable yet: {experiment.missing}")
    elif backend in experiment.unavailable:
        lines.append(f"  not runnable on {backend} yet: {experiment.unavailable[backend]}")
    for r in requests[:3]:
        lines.append(f"  e.g. {r.label}: {r.machine}, policy {r.policy}, "
                     + ", ".join(j.workload for j in r.jobs)
                     + (" beside " + ", ".join(program_names(
                         [{"workload": b.workload, "args": list(b.args)} for b in r.background]))
                        if r.background else ""))
    return lines


def shared_requests(names: list[str], scale: str, backend: str) -> list:
    """The runs of several experiments, each once (figures drawn from the same runs, such
    as lee-fig9 and lee-overheads, share them), in the experiments' order."""
    union = {}
    for name in names:
        for r in runnable(name, backend).requests(scale, backend):
            union.setdefault(request_key(r), r)
    return list(union.values())


def uncarried_requests(names: list[str], scale: str, backend: str, say: Say) -> list:
    """The figures' shared runs less those carried for every figure that has them."""
    needed: dict[str, object] = {}
    for name in names:
        experiment = runnable(name, backend)
        requests = experiment.requests(scale, backend)
        dirs = run_dirs(requests)
        found, _ = carried_runs(experiment, scale, backend, dirs, say)
        for r, d in zip(requests, dirs):
            if d.name not in found.run_ids:
                needed.setdefault(request_key(r), r)
    return [r for r in shared_requests(names, scale, backend) if request_key(r) in needed]


def reproduce_many(names: list[str], scale: str = "smoke", backend: str = "gem5",
                   jobs: int | None = None, executor: str = "local", say: Say = print,
                   source: str = "auto", slurm: dict | None = None,
                   carry: bool = False, only: list[dict[str, str]] | None = None
                   ) -> list[Reproduced]:
    """Several figures as one campaign: their runs, each once, ``jobs`` at a time across
    the figures' boundaries (no core waits for one figure's last run before the next
    figure's start), then each figure drawn as :func:`reproduce` draws it."""
    for name in names:
        runnable(name, backend)
    if only:
        if len(names) != 1:
            raise UserError("--only takes one figure")
        return [reproduce(names[0], scale, backend, jobs, executor, say, source, slurm,
                          carry, only)]
    if len(names) > 1 and source == "auto" and can_run(backend):
        todo = uncarried_requests(names, scale, backend, say)
        if todo:
            run_requests(todo, campaign_name(names, scale), jobs, executor, say, slurm or {},
                         run_seconds_estimate(names, scale, backend))
    if source != "partial":
        return [reproduce(n, scale, backend, jobs, executor, say, source, slurm)
                for n in names]
    drawn = []
    for name in names:     # what has runs so far; the others are said, not fatal
        try:
            drawn.append(reproduce(name, scale, backend, jobs, executor, say, source, slurm,
                                   carry))
        except NoFinishedRuns as e:
            if len(names) == 1:
                raise
            say(str(e))
    if not drawn:
        raise UserError(f"no finished runs of {', '.join(names)} at {scale} scale on "
                        f"{backend} in {paths.results_dir()} yet")
    return drawn


def campaign_name(names: list[str], scale: str) -> str:
    """A campaign's name for its logs and its SLURM job: the figures' names (no spaces),
    shortened with a hash of them when long."""
    joined = "+".join(names)
    if len(joined) > 48:
        digest = hashlib.sha256(joined.encode()).hexdigest()[:8]
        joined = f"{names[0]}+{len(names) - 1}-more-{digest}"
    return f"{joined}-{scale}"


class NoFinishedRuns(UserError):
    """``--partial`` found no finished run of a figure."""


def reproduce(name: str, scale: str = "smoke", backend: str = "gem5", jobs: int | None = None,
              executor: str = "local", say: Say = print, source: str = "auto",
              slurm: dict | None = None, carry: bool = False,
              only: list[dict[str, str]] | None = None) -> Reproduced:
    """Draw one figure (see the module's docstring); ``slurm``: options of
    :func:`schedlab.campaigns.slurm.submit` (partition, time_limit_min, ...); ``carry``
    (with source "partial"): also keep the tables under ``data/<study>/partial/``;
    ``only`` (``--only`` selectors): make just the runs with those labels (those not done
    yet), then draw what has finished, as ``--partial`` does."""
    experiment = runnable(name, backend)
    requests = experiment.requests(scale, backend)
    if only:
        make_only(experiment, select(name, requests, only), scale, backend, jobs, executor,
                  say, slurm or {})
        source = "partial"
    if source == "auto":
        source = "runs" if can_run(backend) else "committed"
    where = table_paths(experiment, scale, backend, committed=source == "committed")
    reduction = experiment.reductions.get(scale, "")
    if source == "partial":
        dirs = run_dirs(requests)
        found, carry_where = carried_runs(experiment, scale, backend, dirs, say)
        # Runs the store holds are collected from it, carried or not: today's analysis.
        done = finished_runs(dirs)
        count = len({d.name for d in done} | found.run_ids)
        if not count:
            raise NoFinishedRuns(f"no finished runs of {name} at {scale} scale on {backend} "
                                 f"in {paths.results_dir()} yet; start them with 'run.py "
                                 f"reproduce {name}' (SCHEDLAB_RESULTS names another store)")
        tables = found.merged(collect(experiment, done) if done else {})
        where = partial_paths(experiment, scale, backend)
        for part, path in where.items():
            save_committed(tables[part], path)
        if carry:
            carried.save(tables, carry_where)
            where = {**carry_where, "note": carried.write_note(carried.note(
                experiment, scale, backend, tables[""], requests, carry_where,
                carried.checkout()), carry_where)}
        reduction = (f"PARTIAL: {count} of the {len(requests)} runs finished"
                     + (f"; {reduction}" if reduction else ""))
        say(f"{name}: {count} of {len(requests)} runs finished; tables in "
            + ", ".join(str(p) for p in where.values()))
    elif source == "runs":
        if not can_run(backend):
            raise UserError(f"{name} on gem5 needs GEM5=/path/to/gem5.fast (see README), or "
                            f"--backend qemu for placement only")
        dirs = run_dirs(requests)
        found, carry_where = carried_runs(experiment, scale, backend, dirs, say)
        # A carried run the store also holds is collected again from it (today's analysis).
        finished = {d for d in finished_runs(dirs) if d.name in found.run_ids}
        todo = [r for r, d in zip(requests, dirs) if d.name not in found.run_ids]
        if todo:
            report = run_requests(todo, f"{name}-{scale}", jobs, executor, say, slurm or {},
                                  run_seconds_estimate([name], scale, backend))
            finished |= set(report.run_dirs())
        # In the requests' order, not the order the runs finished in: a table made again
        # from the same runs reads the same.
        mine = [d for d in dirs if d in finished]
        tables = found.merged(collect(experiment, mine) if mine else {})
        differ = artefact_mismatches(tables[""], load_committed(where[""]))
        if differ:
            raise UserError(f"{name}: {len(differ)} runs were made here from other built "
                            f"files than the committed runs of the same ids (first "
                            f"{differ[0]}): this host's guest build is not the committed "
                            f"one; compare 'run.py build all' here and there "
                            f"(bench/reproducibility.md); the committed tables are kept")
        for part, path in where.items():
            save_committed(tables[part], path)
        update_store()
        say(f"{name}: tables in " + ", ".join(str(p) for p in where.values()))
        superseded = carried.remove(carry_where)
        if superseded:
            say(f"{name}: the carried tables are superseded and removed (commit their "
                f"removal): " + ", ".join(str(p) for p in superseded))
    else:
        tables = {part: load_committed(path) for part, path in where.items()}
        if any(t is None for t in tables.values()):
            kept = carried_paths(experiment, scale, backend)[""]
            hint = (f"; {kept} holds some of its runs ('--partial' draws them)"
                    if kept.is_file() else "")
            raise UserError(f"no committed {backend} results for {name} at {scale} scale "
                            f"({where['']}); run it with GEM5 set, or use --backend qemu"
                            + hint)
        say(f"{name}: drawing from the committed tables {where['']}")
    main = tables[""]
    # Tables made now, or of runs this tree names, are current by construction.
    standing = (currency(experiment, where[""], scale, backend) if source == "committed"
                else None)
    ctx = FigureContext(name=name, title=experiment.title, scale=scale, backend=backend,
                        reduction=reduction, notes=experiment.notes,
                        provenance=provenance(main), source=source,
                        stale=standing.describe() if standing and not standing.current
                        else "",
                        variability=variability_note(experiment, main))
    dest = figures_dir() / (f"{name}--{scale}--{backend}"
                            + ("--partial" if source == "partial" else "") + ".png")
    analysis = experiment.analysis
    # A study that collects several tables draws from all of them, else from the main one.
    drawn = tables if analysis.collect is not None else main
    outputs = analysis.draw(experiment, drawn, ctx, dest)
    sidecar = dest.with_suffix(".json")
    summary = (analysis.summary(experiment, tables if analysis.collect is not None
                                else {"": main})
               if analysis.summary is not None else None)
    reading = reading_path(experiment.study)
    write_atomic(sidecar, json.dumps({
        "name": name, "study": experiment.study, "kind": experiment.kind,
        "title": experiment.title, "scale": scale, "backend": backend, "source": source,
        "caption": ctx.caption(), "provenance": ctx.provenance,
        "figure": outputs[0].name, "extra": [p.name for p in outputs[1:]],
        "data": [str(p) for p in where.values()],
        "currency": standing.describe() if standing else "current: made from this tree's runs",
        "stale": bool(ctx.stale),
        "summary": None if summary is None else json.loads(summary.round(4).to_json(
            orient="records")),
        "reading": str(reading) if reading.is_file() else None}, indent=1))
    return Reproduced(outputs[0], sidecar, source, ctx.provenance.get("runs", 0))


def variability_note(experiment: Experiment, main: pd.DataFrame) -> str:
    """The caption's words on the spread between guest seeds (the study's bench record) and
    the smallest difference the table's repetitions a condition resolve."""
    reps = int(main["rep"].nunique()) if "rep" in main and len(main) else 1
    spread = spread_for(experiment.study, experiment.name, experiment.metric,
                        lambda e: get(e).study)
    return caption_note(spread, experiment.metric, reps)


def make_only(experiment: Experiment, chosen: list, scale: str, backend: str,
              jobs: int | None, executor: str, say: Say, slurm_options: dict) -> None:
    """Make the chosen runs of the experiment that are neither finished nor carried."""
    if not can_run(backend):
        raise UserError(f"--only makes runs: {experiment.name} on gem5 needs "
                        f"GEM5=/path/to/gem5.fast (see README)")
    dirs = run_dirs(chosen)
    found, _ = carried_runs(experiment, scale, backend, dirs, say)
    todo = [r for r, d in zip(chosen, dirs) if d.name not in found.run_ids]
    say(f"{experiment.name}: {len(chosen)} runs chosen, {len(chosen) - len(todo)} carried")
    if todo:
        run_requests(todo, f"{experiment.name}-{scale}-only", jobs, executor, say,
                     slurm_options, run_seconds_estimate([experiment.name], scale, backend))


def verify_figure(name: str, count: int, scale: str, backend: str, say: Say):
    """``reproduce NAME --verify COUNT``: :func:`schedlab.campaigns.verify.verify`."""
    experiment = runnable(name, backend)
    if not can_run(backend):
        raise UserError(f"--verify re-makes runs: {name} on gem5 needs "
                        f"GEM5=/path/to/gem5.fast (see README)")
    where = table_paths(experiment, scale, backend, committed=True)
    # The committed tables, else (a stale or missing table, a campaign still running) the
    # runs carried so far.
    kept = {p: path for p, path in carried_paths(experiment, scale, backend).items()
            if p in where}
    return verify(experiment, count, scale, backend, [where, kept], collect, run_requests,
                  say)


def describe_only(name: str, only: list[dict[str, str]], scale: str, backend: str
                  ) -> list[str]:
    """``--dry-run --only``: each chosen run's id and whether a campaign reuses it."""
    experiment = runnable(name, backend)
    chosen = select(name, experiment.requests(scale, backend), only)
    where = table_paths(experiment, scale, backend, committed=True)
    kept = carried_paths(experiment, scale, backend)
    carried_ids = (set(pd.read_csv(kept[""], usecols=["run_id"])["run_id"])
                   if kept[""].is_file() else set())
    lines = [f"{name}: {len(chosen)} runs chosen by --only"]
    for r, run_id, what in run_states(chosen, load_committed(where[""]), carried_ids):
        lines.append(f"  {label_of(r)}: {run_id}: {what}")
    return lines


def run_requests(requests, name, jobs, executor, say, slurm_options,
                 host_seconds=run_host_seconds):
    """Run a campaign's requests on this host or as a SLURM job array (the costliest by
    ``host_seconds`` first); both executors' outcomes as one CampaignReport. An
    interruption (after the executor's summary) and failed runs end here, the failures
    with the first one's error and log."""
    report = _execute(requests, name, jobs, executor, say, slurm_options, host_seconds)
    if report.interrupted and not report.failed:
        raise KeyboardInterrupt       # the summary said "rerun to resume"
    if report.failed:
        first = report.failed[0]
        raise UserError(f"{len(report.failed)} of {len(requests)} runs failed, first "
                        f"{first.run_id}: {error_line(first.log_tail)} (log: "
                        f"{first.log or logs_dir() / (first.run_id + '.log')}); rerun to "
                        f"retry them "
                        f"(finished runs are kept)")
    return report


def _execute(requests, name, jobs, executor, say, slurm_options, host_seconds):
    """Run the campaign; both executors' outcomes as one CampaignReport."""
    from schedlab.campaigns.local import CampaignReport, RunOutcome, run_campaign
    from schedlab.campaigns.plan import finished_state
    if executor == "local":
        return run_campaign(requests, jobs=jobs, name=name, say=say,
                            host_seconds=host_seconds)
    if executor != "slurm":
        raise UserError(f"unknown executor {executor!r}; choose local or slurm")
    from schedlab.campaigns import slurm
    submitted = slurm.submit(requests, name=name, parallelism=jobs or 8, progress=say,
                             host_seconds=host_seconds, **slurm_options)
    report = CampaignReport(interrupted=not submitted.finished)
    for r in submitted.runs:
        state = finished_state(r.dir) or ("failed" if r.state == "failed" else r.state)
        report.outcomes.append(RunOutcome(r.run_id, r.request.label, state,
                                          log_tail=r.log_tail or "", log=r.log))
    return report
