"""Cache characterisation of the workloads with cachegrind, stored as data.

Each workload runs at smoke size under cachegrind with the L1 and last-level geometries of
the catalogue machines the studies use; the miss rates go to
``workloads/characterisation.json`` (a repository file), which ``run.py workloads`` shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from schedlab.errors import UserError
from schedlab.guest import inputs, packages
from schedlab.guest.programs import build_all
from schedlab.guest.workloads import GUEST_BIN, Workload, load_registry
from schedlab.machine import load_machine
from schedlab.paths import WORKLOADS
from schedlab.store import write_atomic

CHARACTERISATION = WORKLOADS / "characterisation.json"
# A real program's size that is its start-up alone (workload.toml), and where the
# characterisation keeps its instructions: the region of interest must begin after them.
STARTUP = "startup"
STARTUP_KEY = "startup_instructions"

# The machines whose caches every workload is characterised on (study 1's two machines and
# study 3's Westmere); their geometries come from the catalogue (configs/machines.toml).
CHARACTERISE_ON = ("clovertown-e5320", "niagara", "westmere-x5660")
# cachegrind needs a power-of-two number of sets and lines no shorter than the host's widest
# register (32 B with AVX): Niagara's 16 B-line D1 is modelled with 32 B lines; "approx"
# records every such change.
MIN_LINE = 32


def _pow2_geometry(size: int, assoc: int, line: int) -> tuple[tuple[int, int, int], str]:
    """Nearest cachegrind-legal geometry (power-of-two sets), and a note if it changed."""
    note = ""
    if line < MIN_LINE:
        note = f"{line} B lines modelled as {MIN_LINE} B (cachegrind minimum); "
        line = MIN_LINE
    sets = size // (assoc * line)
    if sets > 0 and sets & (sets - 1) == 0:
        return (size, assoc, line), note.rstrip("; ")
    p2 = 1 << max(0, (sets - 1).bit_length())
    new_assoc = max(1, round(size / (p2 * line)))
    new = (p2 * new_assoc * line, new_assoc, line)
    return new, note + f"{size}B {assoc}-way modelled as {new[0]}B {new_assoc}-way"


def geometries(machines: tuple[str, ...] = CHARACTERISE_ON) -> dict[str, dict]:
    """cachegrind I1/D1/LL geometries of catalogue machines (LL = the machine's last level)."""
    out = {}
    for mname in machines:
        spec = load_machine(mname)
        l1 = {c.kind: c for c in spec.caches if c.level == 1}
        if "instruction" not in l1 or "data" not in l1:
            raise UserError(f"machine {mname} has no split L1; choose another to characterise on")
        entry, notes = {}, []
        for level, cache in (("I1", l1["instruction"]), ("D1", l1["data"]), ("LL", spec.llc)):
            geo, note = _pow2_geometry(cache.size, cache.assoc, cache.line)
            entry[level] = geo
            if note:
                notes.append(f"{level} {note}")
        entry["approx"] = "; ".join(notes)
        out[mname] = entry
    return out


def _parse_cachegrind(text: str) -> dict:
    """Totals from a cachegrind.out file's 'events:' and 'summary:' lines."""
    events = summary = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    if not events or not summary:
        raise UserError("cachegrind produced no summary; is valgrind working?")
    return dict(zip(events, summary))


def cachegrind(argv: list[str], geo: dict, timeout: float = 600,
               stdin: Path | None = None) -> dict:
    """Run argv under cachegrind with the given I1/D1/LL; return its event totals."""
    if shutil.which("valgrind") is None:
        raise UserError("valgrind not found; install it (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="schedlab-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={out}",
               *(f"--{lvl}={','.join(map(str, geo[lvl]))}" for lvl in ("I1", "D1", "LL")),
               *argv]
        with open(stdin or os.devnull, "rb") as given:
            # Its output to a file (a real program's stdout may be binary); valgrind's to a pipe.
            r = subprocess.run(cmd, stdin=given, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=tmp,
                               env={**os.environ, "SCHEDLAB_OUT": tmp})
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["?"])[-1]
            raise UserError(f"cachegrind run of {Path(argv[0]).name} failed: {last}")
        return _parse_cachegrind(out.read_text())


def miss_rates(ev: dict) -> dict:
    """I1, D1 and LL miss rates (LL per reference, i.e. of all I+D accesses) from totals."""
    ir = ev.get("Ir", 0)
    data = ev.get("Dr", 0) + ev.get("Dw", 0)
    i1m = ev.get("I1mr", 0)
    d1m = ev.get("D1mr", 0) + ev.get("D1mw", 0)
    llm = ev.get("ILmr", 0) + ev.get("DLmr", 0) + ev.get("DLmw", 0)
    return {
        "instructions": ir,
        "data_refs": data,
        "i1_miss_rate": i1m / ir if ir else 0.0,
        "d1_miss_rate": d1m / data if data else 0.0,
        "ll_miss_rate": llm / (ir + data) if ir + data else 0.0,
        "ll_local_miss_rate": llm / (i1m + d1m) if i1m + d1m else 0.0,
        "ll_mpki": 1000.0 * llm / ir if ir else 0.0,
    }


def characterise(names: list[str] | None = None, progress: Callable[[str], None] = print,
                 out: Path = CHARACTERISATION) -> dict:
    """Run each workload at smoke size under cachegrind for each geometry; store the rates."""
    registry = load_registry()
    names = names or list(registry)
    for n in names:
        if n not in registry:
            raise UserError(f"unknown workload '{n}'; run 'python3 run.py workloads' to list them")
    overlay = build_all(progress)
    geos = geometries()
    data = json.loads(out.read_text()) if out.is_file() else {}
    data.setdefault("workloads", {})
    data.setdefault("sources", {})
    data["geometries"] = {m: {k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()}
                          for m, g in geos.items()}
    data["size_class"] = "smoke"
    data["tool"] = "valgrind --tool=cachegrind (LRU, write-allocate, inclusive-ish LL model)"
    for n in names:
        w = registry[n]
        if w.kind == "driver":  # it only spawns other workloads; those are characterised
            continue
        entry = {}
        with tempfile.TemporaryDirectory(prefix="schedlab-char-") as tmp:
            argv, stdin = ([str(overlay / GUEST_BIN / n), *w.args("smoke")], None)
            if w.is_real_program:
                argv, stdin = _real_program_on_host(w, Path(tmp), progress)
            for m, g in geos.items():
                progress(f"characterise: {n} on {m}")
                entry[m] = {k: (round(v, 6) if isinstance(v, float) else v)
                            for k, v in miss_rates(cachegrind(argv, g, stdin=stdin)).items()}
        if STARTUP in w.sizes:   # what the region of interest must follow
            with tempfile.TemporaryDirectory(prefix="schedlab-char-") as tmp:
                argv, stdin = _real_program_on_host(w, Path(tmp), progress, STARTUP)
                progress(f"characterise: {n}'s start-up")
                first = next(iter(geos.values()))
                data.setdefault(STARTUP_KEY, {})[n] = cachegrind(argv, first, stdin=stdin)["Ir"]
        data["workloads"][n] = entry
        data["sources"][n] = w.content_hash()
        write_atomic(out, json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.chmod(out, 0o644)  # a repository file, not a private temporary
    return data


def _real_program_on_host(w: Workload, root: Path, progress: Callable[[str], None],
                          size: str = "smoke") -> tuple[list[str], Path | None]:
    """A real program's command at a size on the host: staged from its locked packages, its
    inputs at their guest paths below the same root (its stdout goes nowhere)."""
    files = packages.program_files(w.name, w.dir, w.program, progress)
    guest_argv, stdin, _ = w.command(size)
    made = {w.input_guest_path(size, n): inputs.make(d, f"workloads/{w.name} {n}")
            for n, d in w.inputs(size).items()}
    files = packages.ProgramFiles(files.executable, {**files.files, **made})
    argv = packages.host_argv(files, root, guest_argv)
    return argv, (root / stdin.lstrip("/")) if stdin else None


def startup_instructions(name: str) -> int | None:
    """Instructions of a real program's start-up (its ``startup`` size, under cachegrind on
    the host), or None if it has none measured (the stand-ins build their inputs in their
    own start-up, which the studies' warm-ups were measured to cover)."""
    if not CHARACTERISATION.is_file():
        return None
    return json.loads(CHARACTERISATION.read_text()).get(STARTUP_KEY, {}).get(name)


def load_characterisation(with_sources: bool = False):
    """Miss rates per workload and machine (and, if asked, the source hash each was made from)."""
    if not CHARACTERISATION.is_file():
        return ({}, {}) if with_sources else {}
    try:
        data = json.loads(CHARACTERISATION.read_text())
        if with_sources:
            return data.get("workloads", {}), data.get("sources", {})
        return data.get("workloads", {})
    except json.JSONDecodeError:
        raise UserError(f"{CHARACTERISATION} is not valid JSON; regenerate it with "
                        f"'python3 run.py workloads --characterise'") from None
