"""The kernel patch series as a reviewer reads it (kernel-patches/series).

- every patch passes ``scripts/checkpatch.pl --strict`` of the pinned Linux source
  (versions.toml); skipped, with the reason, when the source tarball is not installed;
- every sysctl and boot parameter the series adds is documented inside the series
  (Documentation/admin-guide/sysctl/kernel.rst, Documentation/admin-guide/kernel-parameters.txt)
  and in kernel-patches/README.md;
- the sysctls the host writes (policies.toml, the gem5 attribution switch) are the series';
- every Kconfig option the series adds is requested by a config fragment.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from schedlab.guest import kernel
from schedlab.errors import UserError

PATCHES = Path(__file__).resolve().parent.parent / "kernel-patches"
# What checkpatch.pl reads besides itself (it warns, not fails, without them).
CHECKPATCH_FILES = ("scripts/checkpatch.pl", "scripts/spelling.txt",
                    "scripts/const_structs.checkpatch")
# Written by the host: policies.toml's switches and schedlab's M5_SWITCH_SYSCTL
# (--attribute-tasks on gem5).
HOST_SYSCTLS = {"kernel.sched_cache_affinity", "kernel.sched_rt_task_affinity",
                "kernel.sched_regions", "kernel.sched_region_policy",
                "kernel.sched_pools", "kernel.sched_pool_cpus", "kernel.sched_pool_placement",
                "kernel.sched_m5_switch"}


def _series() -> list[str]:
    return [p.name for p in kernel.series()]


def _added(text: str) -> dict[str, list[str]]:
    """The lines a patch adds, per file (``+++ b/<file>``), without the leading '+'."""
    files: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            current = files.setdefault(line[len("+++ b/"):], [])
        elif line.startswith("diff --git"):
            current = None
        elif current is not None and line.startswith("+"):
            current.append(line[1:])
    return files


def _series_added() -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for name in _series():
        for f, lines in _added((PATCHES / name).read_text()).items():
            merged.setdefault(f, []).extend(lines)
    return merged


def _code(added: dict[str, list[str]]) -> str:
    return "\n".join(line for f, lines in added.items() if not f.startswith("Documentation/")
                     for line in lines)


def new_sysctls() -> set[str]:
    """kernel.* sysctls the series registers (every table it adds goes under "kernel")."""
    return {f"kernel.{n}" for n in re.findall(r'\.procname\s*=\s*"(\w+)"', _code(_series_added()))}


def new_boot_parameters() -> set[str]:
    code = _code(_series_added())
    setup = re.findall(r'__setup\("([\w.-]+)=?"', code)
    early = re.findall(r'early_param\("([\w.-]+)"', code)
    return set(setup) | set(early)


def new_kconfig_options() -> set[str]:
    added = _series_added()
    return {m for f, lines in added.items() if f.endswith("Kconfig") for line in lines
            for m in re.findall(r"^config (\w+)$", line)}


@pytest.fixture(scope="module")
def checkpatch(tmp_path_factory) -> Path:
    """checkpatch.pl and its data files from the pinned source tarball."""
    try:
        tarball, _ = kernel.source_tarball()
    except UserError as e:
        pytest.skip(f"no pinned Linux source for checkpatch.pl: {e}")
    root = tmp_path_factory.mktemp("checkpatch")
    subprocess.run(["tar", "xf", str(tarball), "-C", str(root), "--strip-components=1",
                    "--wildcards", *(f"*/{f}" for f in CHECKPATCH_FILES)], check=True,
                   timeout=300)
    return root / "scripts" / "checkpatch.pl"


def _run_checkpatch(checkpatch: Path, patch: Path) -> subprocess.CompletedProcess:
    # --no-tree: only the scripts are extracted, not the whole source.
    return subprocess.run(["perl", str(checkpatch), "--strict", "--no-tree", "--color=never",
                           str(patch)], capture_output=True, text=True, timeout=120)


def test_series_lists_every_patch_once():
    names = _series()
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(p.name for p in PATCHES.glob("*.patch"))
    # Numbered in the order they apply.
    assert [n[:4] for n in names] == [f"{i:04d}" for i in range(1, len(names) + 1)]


@pytest.mark.parametrize("name", _series())
def test_patch_is_checkpatch_strict_clean(checkpatch, name):
    r = _run_checkpatch(checkpatch, PATCHES / name)
    assert r.returncode == 0 and "total: 0 errors, 0 warnings, 0 checks" in r.stdout, \
        f"{name}:\n{r.stdout[-4000:]}{r.stderr[-2000:]}"


def test_checkpatch_harness_catches_problems(checkpatch, tmp_path):
    # An undocumented boot parameter and a missing sign-off: the run must not pass vacuously.
    bad = tmp_path / "bad.patch"
    bad.write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: A U Thor <author@example.org>\nSubject: [PATCH] sched: Add a knob\n\n"
        "Adds a knob.\n---\n kernel/sched/core.c | 6 ++++++\n 1 file changed, 6 insertions(+)\n\n"
        "diff --git a/kernel/sched/core.c b/kernel/sched/core.c\n"
        "index 1111111..2222222 100644\n--- a/kernel/sched/core.c\n+++ b/kernel/sched/core.c\n"
        "@@ -1,3 +1,9 @@\n #include <linux/a.h>\n #include <linux/b.h>\n #include <linux/c.h>\n"
        "+static int __init setup_knob(char *str)\n+{\n+\treturn 1;\n+}\n"
        "+__setup(\"knob=\", setup_knob);\n+\n")
    r = _run_checkpatch(checkpatch, bad)
    assert r.returncode != 0
    assert "UNDOCUMENTED_SETUP" in r.stdout or "un-documented" in r.stdout, r.stdout
    assert "Signed-off-by" in r.stdout, r.stdout


def test_patches_say_why_in_linux_style():
    for name in _series():
        text = (PATCHES / name).read_text()
        subject = re.search(r"^Subject: \[PATCH[^\]]*\] (.+)$", text, re.M).group(1)
        assert re.fullmatch(r"[a-z0-9_]+(/[a-z0-9_]+)*: [A-Z].*", subject), name
        body = text.split("\n\n", 1)[1].split("Signed-off-by:", 1)[0].strip()
        assert len(body.splitlines()) >= 3, f"{name}: the message should say why"
        assert all(len(line) <= 75 for line in body.splitlines()), f"{name}: wrap the body at 75"


def test_host_sysctls_are_provided_by_the_series():
    assert HOST_SYSCTLS <= new_sysctls(), new_sysctls()
    with open(PATCHES / "policies.toml", "rb") as f:
        policies = tomllib.load(f)["policy"]
    used = {k for p in policies.values() for k in p.get("sysctl", {})}
    ours = {k for k in used if k in HOST_SYSCTLS or k.endswith("_affinity")}
    assert ours <= new_sysctls(), ours - new_sysctls()


def test_every_new_knob_is_documented_in_the_series():
    added = _series_added()
    rst = added.get("Documentation/admin-guide/sysctl/kernel.rst", [])
    headings = {rst[i] for i in range(len(rst) - 1)
                if rst[i] and re.fullmatch(r"=+", rst[i + 1]) and len(rst[i + 1]) == len(rst[i])}
    sysctls = new_sysctls()
    assert sysctls, "the series adds no sysctl?"
    missing = {s for s in sysctls if s.removeprefix("kernel.") not in headings}
    assert not missing, f"sysctls without an entry in kernel.rst: {sorted(missing)}"

    params_doc = "\n".join(added.get("Documentation/admin-guide/kernel-parameters.txt", []))
    params = new_boot_parameters()
    assert {"sched_cache_affinity", "sched_rt_task_affinity", "sched_m5_switch",
            "numa_emu_cpus"} <= params, params
    missing = {p for p in params if not re.search(rf"^\t{re.escape(p)}=", params_doc, re.M)}
    assert not missing, f"boot parameters without an entry in kernel-parameters.txt: {missing}"


def test_every_new_knob_is_in_the_readme():
    readme = (PATCHES / "README.md").read_text()
    for knob in sorted(new_sysctls() | {f"{p}=" for p in new_boot_parameters()}):
        assert f"`{knob}" in readme, f"kernel-patches/README.md does not mention {knob}"
    for option in sorted(new_kconfig_options()):
        assert f"CONFIG_{option}" in readme, option


def test_every_new_kconfig_option_is_requested():
    options = new_kconfig_options()
    assert {"SCHED_RT_TASK_AFFINITY", "SCHED_M5_SWITCH"} <= options, options
    wanted = kernel._requested_options(kernel.fragments())
    assert all(wanted.get(f"CONFIG_{o}") == "y" for o in options), options
