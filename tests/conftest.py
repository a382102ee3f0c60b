"""Shared fixtures: the real guest builds (cached by content hash) and a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def guest_kernel():
    from schedlab.guest.kernel import build_kernel
    return build_kernel(progress=lambda s: print(s, file=sys.stderr))


@pytest.fixture(scope="session")
def guest_image():
    from schedlab.guest.image import build_image
    return build_image(progress=lambda s: print(s, file=sys.stderr))


@pytest.fixture
def drawn_figure(monkeypatch):
    """``drawn_figure(module)`` makes the module's ``finish`` keep the figure instead of
    saving it, drawn so its layout is final; the last figure is then in the returned dict's
    "fig", and every one, with its FigureContext and destination, in its "drawn"; the
    caption each was given, by its destination's name, in "captions"."""
    def capture(module) -> dict:
        kept: dict = {"drawn": [], "captions": {}}

        def keep(fig, ctx, dest, extra=""):
            fig.canvas.draw()
            kept["fig"] = fig
            kept["drawn"].append((fig, ctx, dest))
            kept["captions"][dest.name] = extra
            return dest
        monkeypatch.setattr(module, "finish", keep)
        return kept
    return capture


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    """Each test writes its runs into its own results directory."""
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def run_cli(*args: str, env: dict | None = None,
            timeout: float = 900) -> subprocess.CompletedProcess:
    """``python3 run.py ARGS`` in this interpreter's environment (no re-bootstrap)."""
    full_env = {**os.environ, "SCHEDLAB_IN_VENV": "1", **(env or {})}
    return subprocess.run([sys.executable, str(REPO / "run.py"), *args], cwd=REPO,
                          capture_output=True, text=True, env=full_env, timeout=timeout)


def qemu_topology_problems(run_dir: Path) -> list[str]:
    """How what a QEMU run's guest saw differs from its machine, by the gem5 backend's own
    topology check: QEMU's sockets are the machine's LLC groups, numbered as the plan
    numbers them. Node memory is left out: QEMU gives every node its own small size."""
    import json
    from schedlab.backends.gem5.plan import plan_from_dict
    from schedlab.backends.gem5.topology import topology_problems
    machine = json.loads((run_dir / "machine.json").read_text())
    facts = json.loads((run_dir / "results.json").read_text())["facts"]
    facts = {k: v for k, v in facts.items() if not k.endswith(".mem_kb")}
    return topology_problems(plan_from_dict(machine), machine, facts)


def committed_gem5_runs_check(name: str, main) -> None:
    """The committed gem5 runs table of experiment ``name`` (one row per run) is ok, carries
    its provenance and holds exactly one row per smoke request of today's definition,
    matched by label (run ids change with the code; labels do not), among the requests
    whose coordinates all take values the table has: a table made before the definition
    ran more repetitions or points (lee-fig9's 2^14) lacks those, and is stale and says so
    (tests/test_currency.py); within what it covers it is complete."""
    from schedlab.campaigns.experiment import registry
    every = registry()[name].requests("smoke", "gem5")
    held = {k: {str(v) for v in main[k]} for k in {k for r in every for k in r.label}
            if k in main}
    requests = [r for r in every
                if all(str(v) in held.get(k, {str(v)}) for k, v in r.label.items())]
    assert main["ok"].all()
    for col in ("gem5_version", "gem5_hash", "kernel", "image", "run_id", "gem5_host_s"):
        assert main[col].notna().all(), col
    assert main["gem5_version"].str.startswith("24.0").all()
    assert main["run_id"].is_unique
    keys = sorted({k for r in requests for k in r.label})
    wanted = sorted(tuple(str(r.label[k]) for k in keys) for r in requests)
    have = sorted(tuple(str(row[k]) for k in keys) for row in main.to_dict("records"))
    assert have == wanted
