"""The README's main command end to end, and its report in a real browser.

``python3 run.py demo`` without gem5: the figures of the committed gem5 results, a live
QEMU campaign, and the HTML report, which headless Chromium (Debian's package) must open
with no console errors; the screenshot is kept for a person to look at.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory, guest_kernel, guest_image):
    results = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "SCHEDLAB_RESULTS": str(results), "SCHEDLAB_IN_VENV": "1"}
    env.pop("GEM5", None)
    out = subprocess.run([sys.executable, str(REPO / "run.py"), "demo"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return results, out


@pytest.mark.timeout(1500)
def test_demo_draws_committed_figures_runs_live_campaign_and_writes_report(demo_output):
    results, out = demo_output
    assert "GEM5 is not set, so the live campaign runs on QEMU" in out.stderr
    # Drawing the committed figures says nothing a user would take for a problem.
    assert "Warning:" not in out.stderr, out.stderr[-3000:]
    report = Path(re.search(r"^report: (\S+)$", out.stdout, re.M).group(1))
    assert report == results / "report.html" and report.is_file()
    live = results / "figures" / "demo-affinity--smoke--qemu.png"
    assert live.stat().st_size > 10_000
    page = report.read_text()
    # every image the page shows exists, and every figure drawn is on the page
    for src in re.findall(r"<img src='([^']+)'", page):
        assert (report.parent / src).is_file(), src
    for figure in (results / "figures").glob("*.png"):
        assert figure.name in page
    assert "models no caches or latencies" in page    # the QEMU caveat
    assert "kazempour-fig2" in page and "brecht-fig1" in page       # the listing
    # The claims ledger opens the page (before the contents), all 23 claims, and each gem5
    # figure shows the claims that read its tables (K1 reads kazempour-fig2's).
    assert page.index("id='claims'") < page.index("<nav>")
    assert len(re.findall(r"<td id='claim-[KDLB]\d'>", page)) == 23
    fig2 = page[page.index("id='kazempour-fig2-smoke-gem5'"):]
    fig2 = fig2[:fig2.index("<h3 id=", 10)]              # up to the next figure's heading
    assert "Claims on this figure" in fig2 and "<a href='#claim-K1'>K1</a>" in fig2


@pytest.mark.timeout(600)
@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed: apt-get install chromium "
                                             "(run.py installs it with the Debian packages)")
def test_report_opens_in_headless_chromium_without_console_errors(demo_output, tmp_path):
    results, _ = demo_output
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--window-size=1200,2600",
         f"--screenshot={shot}", (results / "report.html").as_uri()],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or ":ERROR:" in ln
               and "report.html" in ln]
    assert console == [], console
    assert shot.stat().st_size > 50_000       # a rendered page, not a blank one
    shutil.copyfile(shot, results / "report-screenshot.png")


def test_report_shows_the_micro_schedule_costs_bench_measured(tmp_path, monkeypatch):
    """Study 3's overheads on the page as bench/gem5.md reports them (one row per committed
    bench_regions record)."""
    from schedlab.analysis.report import build_report
    monkeypatch.setenv("SCHEDLAB_RESULTS", str(tmp_path))
    page = build_report([], tmp_path / "report.html").read_text()
    assert "Region scheduling: the cost of a micro-schedule" in page
    for cycles, overhead in (("3,576,211", "134.6 %"), ("1,496,509", "56.3 %"),
                             ("286,686", "6.7 %")):
        assert cycles in page and overhead in page
        assert cycles in (REPO / "bench" / "gem5.md").read_text()
    assert "regions-vm-2026-11-23-open.json" in page
