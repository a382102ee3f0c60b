"""A campaign's requests resolved once, before anything runs: which runs are finished, which
to make, in which order and at what estimated cost. The local executor and SLURM plan
alike (:func:`plan_campaign`), so they skip, order and price a campaign the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from schedlab.campaigns.cost import costliest_first
from schedlab.runs import PreparedRun, RunRequest, prepare


def finished_state(run_dir: Path) -> str | None:
    """"done" or "problems" for a published run (by its results' ok), None if absent."""
    try:
        ok = json.loads((run_dir / "results.json").read_text())["ok"]
    except FileNotFoundError:
        return None
    return "done" if ok else "problems"


@dataclass
class CampaignPlan:
    finished: list[tuple[PreparedRun, str]] = field(default_factory=list)  # done / problems
    todo: list[PreparedRun] = field(default_factory=list)     # to make, the costliest first
    estimate_s: float = 0.0        # host seconds of ``todo``, as the campaign prices them

    @property
    def runs(self) -> int:
        return len(self.finished) + len(self.todo)


def plan_campaign(requests: list[RunRequest], host_seconds: Callable[[RunRequest], float],
                  progress: Callable[[str], None]) -> CampaignPlan:
    """Resolve every request (building what is missing once, before any run starts; a build's
    progress is shown, not its cache hits), each run once however many requests name it."""
    def building(line: str) -> None:
        if "cached in" not in line:
            progress(line)
    plan, seen = CampaignPlan(), set()
    for request in requests:
        prepared = prepare(request, progress=building)
        if prepared.run_id in seen:
            continue
        seen.add(prepared.run_id)
        state = finished_state(prepared.dir)
        if state is None:
            plan.todo.append(prepared)
        else:
            plan.finished.append((prepared, state))
    plan.todo = costliest_first(plan.todo, lambda run: run.request, host_seconds)
    plan.estimate_s = sum(host_seconds(run.request) for run in plan.todo)
    return plan
