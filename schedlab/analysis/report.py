"""``run.py report``: one static HTML page with every figure regenerated so far.

It reads the sidecars that ``run.py reproduce`` writes beside each figure
(``results/figures/*.json``). The claims ledger comes first (the papers' 23 results against
the committed tables: ``schedlab.analysis.claims``), then a contents list (every study and
figure, linked), then a table of every experiment of the four studies with its run count,
cost, status and whether its committed tables are current, then the measured costs the
studies report from ``bench/`` (study 3's micro-schedule). Then one section per study: its
written reading (``data/<study>/reading.md``, Markdown rendered by markdown-it-py) once,
and per figure its scale and backend, where its numbers came from, its run count, its
provenance, whether its tables are current, its caption, its results summary, the claims it
bears on and links to its data. The page is plain HTML and CSS, no scripts.
"""

from __future__ import annotations

import html
import json
import os
import time
from pathlib import Path

from markdown_it import MarkdownIt

from schedlab import paths
from schedlab.analysis import claims as ledger
from schedlab.store import write_atomic

STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
figure { margin: 1em 0 2.5em 0; } img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #444; } .muted { color: #777; }
.stale { color: #a00; font-weight: bold; }
"""


def _hours(h: float) -> str:
    return f"{h:.1f}" if h == h else "?"


def _rel(target: str | Path, base: Path) -> str:
    return os.path.relpath(Path(target).resolve(), base.resolve())


# The studies' names on the page, in the papers' order (the listing's rows give the order).
STUDY_TITLES = {"kazempour": "Study 1: cache affinity on multicores (Kazempour et al.)",
                "demarchi": "Study 2: task-affinity real-time scheduling (De Marchi et al.)",
                "lee": "Study 3: region scheduling (Lee & Schwan)",
                "brecht": "Study 4: processor pools on NUMA (Brecht)",
                "demo": "The demo's live experiment"}
# CommonMark with tables; raw HTML in a reading is shown as text, not interpreted.
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def _reading(path: str | None) -> list[str]:
    """A study's written reading, rendered (its own top heading left out: the section's
    heading names the study)."""
    if not path or not Path(path).is_file():
        return []
    lines = Path(path).read_text().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return ["<div class='reading'><h3>Reading</h3>", MARKDOWN.render("\n".join(lines)),
            "</div>"]


def _summary(rows: list[dict] | None) -> list[str]:
    """The figure's results summary (changes with confidence intervals), if it has one."""
    e = html.escape
    out = []
    if rows:
        cols = list(rows[0])
        out += ["<h3>Results summary</h3><table><tr>"
                + "".join(f"<th>{e(c)}</th>" for c in cols) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(_cell(r.get(c)))}</td>" for c in cols) + "</tr>"
                for r in rows]
        out.append("</table>")
    return out


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _micro_schedule_costs(dest: Path) -> list[str]:
    """Study 3's overheads as ``bench/bench_regions.py`` measured them on gem5: one row per
    committed record (bench/results/regions-*.json; bench/gem5.md says which kernel each
    measured)."""
    e = html.escape
    records = sorted(paths.BENCH_RESULTS.glob("regions-*.json"))
    if not records:
        return []
    out = ["<h2>Region scheduling: the cost of a micro-schedule</h2>",
           "<p>From <code>bench/bench_regions.py</code>: memlat under region-unify against "
           "region-confine on gem5; the time unify loses, divided by its micro-schedules "
           "(the records of 2026-11-26 on: those in the ROI of lee-fig9's runs; earlier "
           "ones: its extra micro-schedules over a whole run), and that cost at the paper's "
           "700 micro-schedules per second "
           "and at the rate measured (share of the CPU's time). Which kernel each record "
           "measured: <code>bench/gem5.md</code>, \"Region scheduling: the cost of a "
           "micro-schedule\".</p>",
           "<table><tr><th>record</th><th>machine</th><th>gem5</th><th>cycles per "
           "micro-schedule</th><th>instructions per micro-schedule</th><th>overhead at "
           "700/s</th><th>measured rate (/s)</th><th>overhead at it</th></tr>"]
    for path in records:
        data = json.loads(path.read_text())
        d = data["derived"]
        machine = data["records"][0]["machine"] if data.get("records") else "?"
        out.append(
            f"<tr><td><a href='{e(_rel(path, dest.parent))}'>{e(path.name)}</a></td>"
            f"<td>{e(machine)} ({d['clock_hz'] / 1e9:.2f} GHz)</td>"
            f"<td>{e(data.get('gem5', '?'))}</td>"
            f"<td>{d['cycles_per_micro_schedule']:,.0f}</td>"
            f"<td>{d['insts_per_micro_schedule']:,.0f}</td>"
            f"<td>{100 * d['overhead_at_paper_rate']:.1f} %</td>"
            f"<td>{d['measured_rate']:.0f}</td>"
            f"<td>{100 * d['overhead_at_measured_rate']:.1f} %</td></tr>")
    out.append("</table>")
    return out


def _claims_table(rows: list[ledger.Row], anchors: bool = True) -> list[str]:
    """The ledger's rows: the paper's numbers, ours, the verdict, the mechanism (a figure's
    rows link to the ledger's, which carry the anchors)."""
    e = html.escape
    out = ["<table><tr><th>claim</th><th>paper</th><th>ours (n per condition, 95 % "
           "interval)</th><th>verdict</th><th>mechanism</th></tr>"]
    for r in rows:
        c = r.claim
        ours = "<br>".join(f"{e(o.rule.what)}: {e(o.ours or '-')} ({e(o.why)})"
                           for o in r.outcomes)
        stale = ("<br><span class='stale'>stale table</span>" if r.stale else "")
        name = (f"<td id='claim-{e(c.id)}'>{e(c.id)}" if anchors
                else f"<td><a href='#claim-{e(c.id)}'>{e(c.id)}</a>")
        out.append(f"<tr>{name} ({e(c.figure)})</td>"
                   f"<td>{e(c.numbers)}</td><td>{ours}</td><td>{e(r.verdict)}{stale}</td>"
                   f"<td>{e(c.mechanism)}</td></tr>")
    return out + ["</table>"]


def _claims(rows: list[ledger.Row]) -> list[str]:
    counts = {v: sum(r.verdict == v for r in rows) for v in dict.fromkeys(
        r.verdict for r in rows)}
    return ["<h2 id='claims'>Claims: the papers against the simulation</h2>",
            "<p>The four papers' published results (data/claims.toml), each computed from "
            "the committed tables by one rule family (<code>run.py claims</code>): "
            + ", ".join(f"{n} {html.escape(v)}" for v, n in counts.items())
            + ". A direction counts only outside its 95 % interval (Welch's t over the "
            "runs); the papers are a yardstick, never a target.</p>",
            *_claims_table(rows)]


def _figure_claims(meta: dict, rows: list[ledger.Row]) -> list[str]:
    """The claims whose rules read this figure's experiment."""
    mine = [r for r in rows if any(meta["name"] in o.rule.experiments for o in r.outcomes)]
    if not mine:
        return []
    return ["<p><b>Claims on this figure</b></p>", *_claims_table(mine, anchors=False)]


def _anchor(meta: dict) -> str:
    partial = "-partial" if meta.get("source") == "partial" else ""
    return f"{meta['name']}-{meta['scale']}-{meta['backend']}{partial}"


def _figure(meta: dict, figures: Path, dest: Path) -> list[str]:
    """One figure's section: its heading, provenance, currency, image, caption, summary."""
    e = html.escape
    prov = meta.get("provenance", {})
    source = {"runs": "this host's runs",
              "partial": "the runs finished so far (PARTIAL: not every run)"}.get(
                  meta.get("source"), "the committed tables (data/)")
    data_links = " ".join(f"<a href='{e(_rel(d, dest.parent))}'>{e(Path(d).name)}</a>"
                          for d in meta.get("data", []))
    extra = " ".join(f"<a href='{e(_rel(figures / x, dest.parent))}'>{e(x)}</a>"
                     for x in meta.get("extra", []))
    partial = " (partial)" if meta.get("source") == "partial" else ""
    return [f"<h3 id='{e(_anchor(meta))}'>{e(meta['name'])}: {e(meta['title'])}{partial}</h3>",
            "<table><tr><th>scale</th><th>backend</th><th>from</th><th>runs</th>"
            "<th>gem5</th><th>gem5 binary</th><th>kernel</th><th>image</th></tr>",
            f"<tr><td>{e(meta['scale'])}</td><td>{e(meta['backend'])}</td>"
            f"<td>{e(source)}</td><td>{e(str(prov.get('runs', '?')))}</td>"
            f"<td>{e(str(prov.get('gem5_version', '-')))}</td>"
            f"<td>{e(str(prov.get('gem5_hash', '-'))[:16])}</td>"
            f"<td>{e(str(prov.get('kernel', '-')))}</td>"
            f"<td>{e(str(prov.get('image', '-')))}</td></tr></table>",
            f"<p class='{'stale' if meta.get('stale') else 'muted'}'>tables: "
            f"{e(meta.get('currency', '?'))}</p>",
            f"<figure><img src='{e(_rel(figures / meta['figure'], dest.parent))}' "
            f"alt='{e(meta['name'])}'><figcaption>{e(meta['caption'])}<br>data: "
            f"{data_links} {extra}</figcaption></figure>",
            *_summary(meta.get("summary"))]


def build_report(listing: list[dict], dest: Path | None = None) -> Path:
    """Write the report; ``listing`` is ``reproduce --list``'s rows."""
    figures = paths.results_dir() / "figures"
    dest = dest or paths.results_dir() / "report.html"
    sidecars = sorted(figures.glob("*.json")) if figures.is_dir() else []
    metas = [json.loads(p.read_text()) for p in sidecars]
    order = list(dict.fromkeys([r["study"] for r in listing] + list(STUDY_TITLES)))
    by_study: dict[str, list[dict]] = {}
    for meta in sorted(metas, key=lambda m: (order.index(m["study"]) if m["study"] in order
                                             else len(order), m["name"])):
        by_study.setdefault(meta["study"], []).append(meta)
    e = html.escape
    out = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
           "<title>schedlab report</title>", f"<style>{STYLE}</style></head><body>",
           "<h1>schedlab: cache- and NUMA-aware scheduling studies, simulated</h1>",
           f"<p class='muted'>Generated {e(time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))}"
           f" from {e(str(paths.results_dir()))}. {len(sidecars)} figure(s).</p>",
           ]
    claim_rows = [ledger.evaluate(c) for c in ledger.load_ledger()]
    out += _claims(claim_rows)
    out += ["<nav><h2>Contents</h2><ul><li><a href='#claims'>Claims</a></li>"
            "<li><a href='#experiments'>Experiments</a></li>"]
    for study, metas_of in by_study.items():
        out.append(f"<li><a href='#study-{e(study)}'>{e(STUDY_TITLES.get(study, study))}</a><ul>"
                   + "".join(f"<li><a href='#{e(_anchor(m))}'>{e(m['name'])}</a>"
                             f"{' (stale tables)' if m.get('stale') else ''}</li>"
                             for m in metas_of) + "</ul></li>")
    out += ["</ul></nav>",
            "<h2 id='experiments'>Experiments</h2><table><tr><th>experiment</th><th>study</th>"
            "<th>shows</th><th>runs (smoke / paper)</th><th>host hours (smoke / paper)</th>"
            "<th>status</th><th>committed smoke tables</th></tr>"]
    for row in listing:
        out.append(f"<tr><td>{e(row['name'])}</td><td>{e(row['study'])}</td>"
                   f"<td>{e(row['title'])}</td><td>{row['runs_smoke']} / {row['runs_paper']}</td>"
                   f"<td>{_hours(row['hours_smoke'])} / {_hours(row['hours_paper'])}</td>"
                   f"<td>{e(row['status'])}</td><td>{e(row.get('committed', '-'))}</td>"
                   "</tr>")
    out.append("</table><p class='muted'>Host hours: estimated from the speeds measured in "
               "bench/, one run at a time on one core; ?: no bench/ record for the machine "
               "yet. Committed tables: current where today's tree computes their runs' ids, "
               "stale where earlier code made them (to be re-made).</p>")
    out += _micro_schedule_costs(dest)
    for study, metas_of in by_study.items():
        out.append(f"<h2 id='study-{e(study)}'>{e(STUDY_TITLES.get(study, study))}</h2>")
        out += _reading(next((m.get("reading") for m in metas_of if m.get("reading")), None))
        for meta in metas_of:
            out += _figure(meta, figures, dest)
            if meta.get("backend") == "gem5":       # the ledger reads the gem5 tables
                out += _figure_claims(meta, claim_rows)
    out.append("</body></html>")
    write_atomic(dest, "\n".join(out) + "\n")
    return dest
