"""Host side of the gem5 backend without gem5: errors, command lines, keys, log handling.

``execute`` is exercised with a stand-in executable (a tiny Python script that prints what
our gem5 script prints and then fails) -- only to test our process handling; no simulation
result here comes from it.
"""

import ast
import dataclasses
import gzip
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pyimports import top_level_names

from schedlab.backends.gem5 import binary, checkpoint, process
from schedlab.backends.gem5 import run as g5run
from schedlab.backends.gem5.plan import plan_from_dict
from schedlab.machine import load_machine

REPO = Path(__file__).resolve().parent.parent


def test_missing_gem5_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GEM5", raising=False)
    with pytest.raises(binary.Gem5Error, match="GEM5 is not set.*gem5.fast"):
        binary.find_gem5()
    monkeypatch.setenv("GEM5", "/nonexistent/gem5.fast")
    with pytest.raises(binary.Gem5Error, match="not an executable"):
        binary.find_gem5()


def test_doctor_reports_missing_gem5(monkeypatch):
    monkeypatch.delenv("GEM5", raising=False)
    rows = binary.doctor()
    item, status, fix = rows[0]
    assert item == "gem5" and status.startswith("not set") and "GEM5" in fix


@pytest.mark.parametrize("version,x86,ok", [("24.0.0.1", True, True), ("24.0", True, True),
                                             ("23.1.0.0", True, False),
                                             ("24.0.0.1", False, False)])
def test_version_check(version, x86, ok):
    info = binary.Gem5Binary(Path("/x/gem5.fast"), version, x86, "h")
    if ok:
        binary.check_version(info)
    else:
        with pytest.raises(binary.Gem5Error):
            binary.check_version(info)


def test_command_line_names_one_options_document(tmp_path):
    from schedlab.backends.gem5.options import Gem5Options, RunSettings
    machine = load_machine("clovertown-e5320-mup").to_dict()
    options = Gem5Options(mode="run", machine=machine, kernel=Path("/k/vmlinux"),
                          command_line="console=ttyS0 pci=off", cpu="o3",
                          checkpoint_dir=Path("/c"), readfile=Path("/r.txt"),
                          settings=RunSettings(max_region_seconds=0.262, seed=7))
    cmd = process.command(Path("/g/gem5.fast"), tmp_path, options)
    assert cmd == ["/g/gem5.fast", "--outdir", str(tmp_path), str(binary.SCRIPT),
                   "--options", str(tmp_path / process.OPTIONS)]
    # What the script reads back is what the host meant, paths included.
    assert Gem5Options.read(tmp_path / process.OPTIONS) == options
    bad = Gem5Options.from_json(options.to_json().replace('"o3"', '"minor"')
                                .replace('"seed"', '"sede"').replace('"plan"', '"mine"'))
    assert bad.problems() == ["cpu 'minor' is not one of atomic, timing, o3, kvm",
                              "hierarchy 'mine' is not one of plan, stock, stock-matched",
                              "unknown options settings.sede"]
    assert options.problems() == []


def test_a_region_is_limited_only_when_every_job_has_a_duration():
    from schedlab.backends.gem5.backend import REGION_GRACE_S, region_limit
    from schedlab.runs import RunRequest, WorkloadRequest

    def request(*durations):
        return RunRequest(machine="clovertown-e5320-mup", backend="gem5",
                          jobs=tuple(WorkloadRequest("bv_0", size="paper", duration=d)
                                     if d else WorkloadRequest("gzip") for d in durations))
    assert region_limit(request(0.006)) == pytest.approx(0.012 + REGION_GRACE_S)
    assert region_limit(request(0.006, 0.2)) == pytest.approx(0.4 + REGION_GRACE_S)
    assert region_limit(request(0.006, None)) is None


def test_checkpoint_key_covers_every_input():
    m = load_machine("clovertown-e5320-mup").to_dict()
    b = binary.Gem5Binary(Path("/g"), "24.0.0.1", True, "binhash")
    base = checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i", ["a"])
    assert base == checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i", ["a"])
    b2 = binary.Gem5Binary(Path("/g"), "24.0.0.1", True, "other")
    faster = load_machine("clovertown-e5320-mup", ["clock=2GHz"]).to_dict()
    more_memory = load_machine("clovertown-e5320-mup", ["memory.size_per_node=1GiB"]).to_dict()
    four = load_machine("clovertown-e5320").to_dict()
    assert len({base, checkpoint.checkpoint_key(b2, plan_from_dict(m), "k", "i", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(faster), "k", "i", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(more_memory), "k", "i", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(four), "k", "i", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(m), "k2", "i", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i2", ["a"]),
                checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i", ["a"],
                                          vmlinux_sha="other bytes"),
                checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i", ["b"])}) == 9


def test_cache_what_ifs_share_the_boot_checkpoint():
    # Caches hold nothing a checkpoint keeps and cost Atomic boot cores nothing: an 8 MiB
    # L2 or slower L1s restore the machine's own checkpoint instead of booting again.
    b = binary.Gem5Binary(Path("/g"), "24.0.0.1", True, "binhash")
    key = checkpoint.checkpoint_key(b, plan_from_dict(load_machine("clovertown-e5320").to_dict()),
                                    "k", "i", ["a"])
    for override in (["l2.size=8MiB"], ["l1d.latency=5cycles", "l2.assoc=8"]):
        m = load_machine("clovertown-e5320", override).to_dict()
        assert checkpoint.checkpoint_key(b, plan_from_dict(m), "k", "i", ["a"]) == key


def test_guest_boot_args_uniform_and_numa():
    m = load_machine("clovertown-e5320").to_dict()
    args = checkpoint.guest_boot_args(m, plan_from_dict(m))
    assert "pci=off" in args and not any(a.startswith("numa") for a in args)
    w = load_machine("westmere-x5660").to_dict()
    args = checkpoint.guest_boot_args(w, plan_from_dict(w))
    assert "numa=fake=2:10,16,16,10" in args
    assert "numa_emu_cpus=0-5:6-11" in args


def test_hector_boots_with_its_stations_as_emulated_nodes():
    # The plan raises Hector's 16 MiB stations to a size Linux can emulate as NUMA nodes.
    h = load_machine("hector").to_dict()
    args = checkpoint.guest_boot_args(h, plan_from_dict(h))
    assert "numa_emu_cpus=0-3:4-7:8-11:12-15" in args
    assert any(a.startswith("numa=fake=4:10,19,19,19,") for a in args)


def _stand_in(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fake-gem5"
    exe.write_text(f"#!{sys.executable}\nimport sys, json\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_execute_streams_progress_and_reports_failure_with_log_tail(tmp_path):
    exe = _stand_in(tmp_path, """
print('schedlab-progress ' + json.dumps({'sim_s': 0.5, 'tick': 5, 'insts': 2000000,
      'host_s': 3, 'ips': 700000}), flush=True)
print('panic: something broke in the model', file=sys.stderr)
sys.exit(1)
""")
    seen = []
    with pytest.raises(binary.Gem5Error) as err:
        process.execute([str(exe)], tmp_path / "out", seen.append)
    assert "exited with status 1" in str(err.value)
    assert "panic: something broke" in str(err.value)
    assert any("M instructions" in s for s in seen)
    assert (tmp_path / "out" / "gem5.stdout").read_text().startswith("schedlab-progress")


def test_execute_returns_events(tmp_path):
    exe = _stand_in(tmp_path, """
print('schedlab-event ' + json.dumps({'event': 'workend', 'tick': 7}), flush=True)
""")
    result = process.execute([str(exe)], tmp_path / "out")
    assert result["events"] == [{"event": "workend", "tick": 7}]


def test_execute_times_out_on_cpu_time_not_the_wall_clock(tmp_path):
    """A gem5 that waits (paused, or starved by a busy host) is not stopped for the wall
    clock's seconds; one that computes is stopped once it has used the timeout's CPU time.
    The result gives both clocks."""
    idle = _stand_in(tmp_path, """
import time
for _ in range(8):
    time.sleep(0.25)
    print('tick', flush=True)
""")
    result = process.execute([str(idle)], tmp_path / "idle", timeout=1.0)
    assert result["host_seconds"] >= 2.0 and result["cpu_seconds"] < 1.0
    # It gives up after 30 s of wall clock, so a limit that misses its CPU time fails the
    # test at once instead of hanging it.
    busy = _stand_in(tmp_path, """
import time
started = time.monotonic()
while time.monotonic() - started < 30:
    end = time.process_time() + 0.1
    while time.process_time() < end:
        pass
    print('tick', flush=True)
""")
    with pytest.raises(binary.Gem5Error, match="more than 1 s of host CPU time"):
        process.execute([str(busy)], tmp_path / "busy", timeout=1.0)


def test_execute_kill_is_reported(tmp_path):
    exe = _stand_in(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    with pytest.raises(binary.Gem5Error, match="killed by signal 9"):
        process.execute([str(exe)], tmp_path / "out")


# --------------------------------------------------------------------------------------
# What gem5's Python loads of this repository, found independently of binary.py: follow the
# import statements (at any depth, so imports inside functions count) from our gem5 script,
# resolving them as the script's sys.path does (configs/ first, then the repository).

def _module_files(name: str, roots: list[Path]) -> list[Path] | None:
    """The files Python executes to import ``name`` from ``roots`` (packages' __init__.py,
    then the module); None if its top-level package is not in ``roots`` (gem5, stdlib);
    [] if it is ours but does not exist."""
    parts = name.split(".")
    root = next((r for r in roots if (r / parts[0]).is_dir() or (r / f"{parts[0]}.py").is_file()),
                None)
    if root is None:
        return None
    files, here = [], root
    for i, part in enumerate(parts):
        here = here / part
        if (here / "__init__.py").is_file():
            files.append(here / "__init__.py")
        elif i == len(parts) - 1 and here.with_suffix(".py").is_file():
            files.append(here.with_suffix(".py"))
        else:
            return []
    return files


def gem5_loaded_files(repo: Path) -> tuple[set[Path], list[str]]:
    """Every file of ``repo`` gem5 loads through configs/schedlab_gem5.py, and the imports
    of our own code that do not resolve (a module or name that is not there)."""
    roots = [repo / "configs", repo]
    script = repo / "configs" / "schedlab_gem5.py"
    seen, todo, problems = set(), [script], []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = ast.parse(path.read_text(), str(path))
        package = path.parent.relative_to(next(r for r in roots if r in path.parents))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                wanted = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.parts[:len(package.parts) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                wanted = [(base, a.name) for a in node.names]
            else:
                continue
            for module, name in wanted:
                files = _module_files(module, roots)
                if files is None:
                    continue                      # gem5's or the standard library's
                where = f"{path.relative_to(repo)}:{node.lineno}"
                if not files:
                    problems.append(f"{where}: no module {module}")
                    continue
                todo += files
                if name is None or name == "*":
                    continue
                sub = _module_files(f"{module}.{name}", roots)
                if sub:
                    todo += sub
                elif name not in top_level_names(files[-1]):
                    problems.append(f"{where}: {module} has no {name}")
    return seen, problems


def _repo_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    for part in ("configs", "schedlab"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_gem5_side_code_compiles_and_its_imports_resolve():
    # The gem5-side files import m5, so they cannot be imported here: compile them, and
    # check that every import of our own code names a module and a name that exist.
    loaded, problems = gem5_loaded_files(REPO)
    for path in loaded:
        compile(path.read_text(), str(path), "exec")
    assert problems == []
    # Of this package, gem5 loads the plan, attribution and sampling modules (and their
    # packages); gem5's embedded Python has nothing but the standard library for them.
    ours = {p.relative_to(REPO).as_posix() for p in loaded if "schedlab" in p.parts}
    assert {"schedlab/backends/gem5/plan.py", "schedlab/backends/gem5/attribution.py",
            "schedlab/backends/gem5/sampling.py"} <= ours
    for rel in ours:
        tree = ast.parse((REPO / rel).read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                for top in ([a.name for a in node.names] if isinstance(node, ast.Import)
                            else [node.module]):
                    top = top.split(".")[0]
                    assert top in sys.stdlib_module_names | {"__future__", "schedlab"}, (rel, top)


def test_import_check_finds_a_module_that_is_not_there(tmp_path):
    # The check above is only worth something if it fails: a stale module name (as
    # schedlab.gem5_plan was once, after the plan moved) and a missing name are found.
    copy = _repo_copy(tmp_path)
    hierarchy = copy / "configs" / "components" / "hierarchy.py"
    text = hierarchy.read_text()
    hierarchy.write_text(text + "\n\ndef _stale():\n    from schedlab import gem5_plan\n"
                         "    from schedlab.backends.gem5.plan import NO_SUCH_NAME\n")
    _, problems = gem5_loaded_files(copy)
    assert len(problems) == 2
    assert "schedlab has no gem5_plan" in problems[0] + problems[1]
    assert "schedlab.backends.gem5.plan has no NO_SUCH_NAME" in problems[0] + problems[1]


def test_config_hash_covers_exactly_the_files_gem5_loads(tmp_path):
    loaded, _ = gem5_loaded_files(REPO)
    assert set(binary.gem5_side_files()) == loaded
    # On a copy of the repository: the same code gives the same hash wherever it lies; any
    # change to a file gem5 loads changes it, and a change to any other file does not.
    copy = _repo_copy(tmp_path)
    base = binary.config_hash(copy)
    assert len(base) == 64 and base == binary.config_hash()
    in_copy = {copy / p.relative_to(REPO) for p in loaded}
    others = [p for p in sorted(copy.rglob("*")) if p.is_file() and p not in in_copy]
    assert len(others) > 20
    for path in [*sorted(in_copy), *others]:
        original = path.read_bytes()
        path.write_bytes(original + b"\nTOUCHED = 1\n")
        changed = binary.config_hash(copy) != base
        path.write_bytes(original)
        assert changed == (path in in_copy), path.relative_to(copy)
    assert binary.config_hash(copy) == base


def test_config_hash_is_the_code_not_its_prose(tmp_path):
    """Comments, docstrings, blank lines and trailing spaces of a gem5-side file leave the
    hash (and so every run id) alone; a changed statement, or a string that is not a
    docstring, changes it."""
    copy = _repo_copy(tmp_path)
    base = binary.config_hash(copy)
    plan = copy / "schedlab" / "backends" / "gem5" / "plan.py"
    original = plan.read_text()
    module_doc = original.index('"""', 0) + 3
    prose = (original[:module_doc] + "Reworded. " + original[module_doc:])
    prose = prose.replace("\n\n", "\n\n\n   \n", 3) + "\n# a comment\n\n"
    # A function's docstring reworded, over other lines, with a comment after it.
    definition = prose.index("\ndef ") + 1
    doc = prose.index('"""', definition) + 3
    assert prose[definition:doc].count("\n") == 1, "plan.py's first def has no docstring"
    end = prose.index('"""', doc) + 3
    prose = prose[:doc] + "Reworded,\n    over two lines." + prose[end - 3:end] \
        + "  # and a comment" + prose[end:]
    plan.write_text(prose)
    assert binary.config_hash(copy) == base
    assigned = prose.replace('"""Reworded,', 'x = """Reworded,')
    hashes = set()
    for code in (prose + "\nTOUCHED = 1\n", prose + '\nTOUCHED = """# not a comment"""\n',
                 assigned, assigned.replace("Reworded,\n", "Reworded,\n\n", 1)):
        plan.write_text(code)
        hashes.add(binary.config_hash(copy))
    # Four different codes (the last a blank line inside a string), four hashes.
    assert len(hashes - {base}) == 4
    plan.write_text(original)
    assert binary.config_hash(copy) == base


# Code whose text the prose-free hash must keep: spaces inside strings (a multi-line
# string's first line too), f-strings spanning lines (one token before Python 3.12, parts
# since), a form feed in a comment, which str.splitlines() would count as a line break.
_TRICKY = (
    'x = 1\n'
    's = f"""a\n  {x}   \nb"""\n'
    't = f"""{{\n  literal }}   \n{x}"""\n'
    'u = """abc   \ndef"""\n'
    'a = 1  # \f\n'
    'b = 2\n'
    'def f():\n'
    '    """doc"""\n'
    '    return f"{x:>{3}}"  # c\n'
)


def test_code_of_keeps_what_strings_hold(tmp_path):
    path = tmp_path / "tricky.py"
    base = binary.code_of(_write(path, _TRICKY))
    for changed in (_TRICKY.replace("{x}   ", "{x}"), _TRICKY.replace("literal }}   ",
                                                                     "literal }}"),
                    _TRICKY.replace("abc   ", "abc"), _TRICKY.replace("b = 2", "b = 3")):
        assert binary.code_of(_write(path, changed)) != base
    assert binary.code_of(_write(path, _TRICKY.replace("# c", "# other"))) == base


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12", "3.13"])
def test_code_of_is_the_same_under_every_python(tmp_path, version):
    """The run id must not depend on the host's Python: code_of under another interpreter
    (where one is installed) gives the same text for the tricky file and for every
    gem5-side file."""
    found = [shutil.which(f"python{version}"),
             *sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))]
    usable = [str(c) for c in found if c and subprocess.run(
        [str(c), "-c", "pass"], capture_output=True).returncode == 0]
    if not usable:
        pytest.skip(f"no usable python{version} installed")
    other = usable[0]
    files = [_write(tmp_path / "tricky.py", _TRICKY), *binary.gem5_side_files()]
    # The module loaded by its path: the package needs Python 3.11 (tomllib), the reading
    # of the code does not, and must be the same under an older interpreter too.
    script = ("import sys, json, importlib.util; from pathlib import Path; "
              "spec = importlib.util.spec_from_file_location('codetext', sys.argv[1]); "
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
              "print(json.dumps([m.read_code(Path(p)) for p in sys.argv[2:]]))")
    module = REPO / "schedlab" / "backends" / "gem5" / "codetext.py"
    out = subprocess.run([other, "-c", script, str(module), *map(str, files)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [binary.code_of(p) for p in files]


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def test_roi_is_first_dump_at_or_after_each_workend():
    dumps = [{"finalTick": 100}, {"finalTick": 250}, {"finalTick": 260}, {"finalTick": 900}]
    g5run.label_roi(dumps, [{"event": "workbegin", "tick": 50}, {"event": "workend", "tick": 250},
                           {"event": "workend", "tick": 800}])
    assert [d["schedlab.roi"] for d in dumps] == [0, 1, 0, 1]


def test_run_kernel_args_keep_base_and_add_policy_args():
    m = load_machine("clovertown-e5320-mup").to_dict()
    args = checkpoint.run_kernel_args(m, plan_from_dict(m), ["sched.foo=1", "pci=off"])
    assert args[:7] == ["console=ttyS0", "acpi=off", "pci=off", "tsc=reliable",
                        "tsc_early_khz=1860000", "nohz=off", "schedlab.backend=gem5"]
    assert args.count("pci=off") == 1 and args[-1] == "sched.foo=1"


def test_run_id_covers_the_kernel_command_line_and_gem5_code(monkeypatch):
    # A campaign reuses finished runs by id: results made with another kernel command line
    # (say, before tsc=reliable) or other configs/ code must not pass for this run's.
    from schedlab import runs

    class Build:
        hash = "build-hash"
    monkeypatch.setattr(runs.kernel, "build_kernel", lambda progress=None, tick_hz=1000: Build())
    monkeypatch.setattr(runs, "build_image", lambda progress=None: Build())
    request = runs.RunRequest(machine="clovertown-e5320-mup", backend="gem5", cpu="o3",
                              jobs=(runs.WorkloadRequest("memlat", cpus="0"),))

    def prepared():
        return runs.prepare(request, progress=lambda s: None)
    first = prepared()
    assert first.spec["kernel_command_line"] == checkpoint.run_kernel_args(
        first.machine.to_dict(), plan_from_dict(first.machine.to_dict()))
    assert prepared().run_id == first.run_id
    monkeypatch.setattr(binary, "config_hash", lambda: "other gem5-side code")
    other_code = prepared().run_id
    monkeypatch.setattr(checkpoint, "plan_boot_args",
                        lambda plan, extra, tick_hz: ["console=ttyS0"])
    other_args = prepared().run_id
    assert len({first.run_id, other_code, other_args}) == 3
    from schedlab.backends.qemu import QEMU_KERNEL_ARGS
    qemu = runs.prepare(runs.RunRequest(machine="clovertown-e5320-mup", jobs=request.jobs,
                                        boot_args=("x=1",)), progress=lambda s: None)
    assert qemu.spec["kernel_command_line"] == [*QEMU_KERNEL_ARGS, "x=1"]


# A stand-in for the gem5 binary that speaks our script's protocol (probe line, events,
# a console file, a checkpoint marker file) so the host-side flow -- probe, checkpoint cache,
# run directory layout -- can be tested without gem5. It simulates nothing and writes no
# statistics.
STAND_IN = r'''
import sys, json, os
from pathlib import Path
argv = sys.argv[1:]
if argv[0] == "--quiet" and "-c" in argv:
    assert argv[1] == "--outdir"       # the probe must not leave m5out/ in the cwd
    print("SCHEDLAB-GEM5 24.0.0.1 1")
    sys.exit(0)
out = Path(argv[argv.index("--outdir") + 1]); out.mkdir(parents=True, exist_ok=True)
options = json.loads(Path(argv[argv.index("--options") + 1]).read_text())
mode = options["mode"]
cpt = Path(options["checkpoint_dir"])
log = Path(os.environ["STAND_IN_LOG"])
log.write_text(log.read_text() + mode + "\n" if log.exists() else mode + "\n")
(out / "board.pc.com_1.device").write_text("stand-in console\n")
def ev(**d): print("schedlab-event " + json.dumps(d), flush=True)
if mode == "boot":
    import gzip
    cpt.mkdir(parents=True, exist_ok=True); (cpt / "m5.cpt").write_text("")
    # gem5 writes memory gzip-compressed: a page of data in 1 MiB of zeros.
    with gzip.open(cpt / "board.physmem.store0.pmem", "wb") as f:
        f.write(bytes(512 << 10) + b"\x07" * 4096 + bytes((512 << 10) - 4096))
    ev(event="checkpoint", tick=10, insts=5)
else:
    assert (cpt / "m5.cpt").exists()
    spec = Path(options["readfile"]).read_text()
    (out / "board.pc.com_1.device").write_text("readfile said: " + spec)
    if spec.startswith("write"):        # the guest's m5 writefile: report and artifacts
        import io, tarfile
        (out / "report.txt").write_text("@@schedlab n end\n")
        with tarfile.open(out / "artifacts.tar", "w") as t:
            info = tarfile.TarInfo("./job/1/samples.txt"); info.size = 3
            t.addfile(info, io.BytesIO(b"1 2"))
    if spec.startswith("panic"):
        print("src/mem/x.cc:1: panic: the stand-in panicked", file=sys.stderr)
        os.abort()
    ev(event="instantiated", tick=10, host_s=0.1)
    ev(event="workbegin", tick=20, insts=7, host_s=0.2)
    ev(event="workend", tick=30, insts=9, host_s=0.3)
    ev(event="exit", tick=40, insts=9, host_s=0.4, code=0)
'''


def test_boot_cache_and_run_layout_with_stand_in(tmp_path, monkeypatch):
    exe = _stand_in(tmp_path, STAND_IN)
    monkeypatch.setenv("GEM5", str(exe))
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "calls.log"))

    m = load_machine("clovertown-e5320-mup").to_dict()
    plan = plan_from_dict(m)
    (tmp_path / "vmlinux").write_bytes(b"a stand-in kernel")    # the checkpoint key hashes it
    job = g5run.Gem5Job(machine=m, plan=plan, cpu="timing", readfile="run this\n",
                        kernel=checkpoint.GuestKernel(tmp_path / "vmlinux", "kernel-hash",
                                                      "image-hash"),
                        kernel_args=tuple(checkpoint.run_kernel_args(m, plan, ["extra=1"])))
    result = g5run.run(job, tmp_path / "run1", progress=None)
    assert result["console"] == "readfile said: run this\n"
    assert result["stats"] == []          # the stand-in writes no statistics
    info = json.loads((tmp_path / "run1" / "gem5.json").read_text())
    assert info["gem5_version"] == "24.0.0.1" and info["cpu"] == "timing"
    assert info["max_rss_mib"] > 0          # the process's peak memory, from wait4
    assert "extra=1" in info["checkpoint"]["kernel_args"]
    assert info["options"]["cpu"] == "timing" and info["options"]["mode"] == "run"
    assert [e["event"] for e in info["events"]][-1] == "exit"
    # The checkpoint's memory is kept uncompressed, the same bytes (gem5 reads either).
    (pmem,) = (tmp_path / "cache" / "gem5-checkpoints").glob("*/cpt/*.pmem")
    assert pmem.read_bytes() == bytes(512 << 10) + b"\x07" * 4096 + bytes((512 << 10) - 4096)
    # A checkpoint kept from before (memory compressed) is converted when reused.
    memory = pmem.read_bytes()
    pmem.write_bytes(gzip.compress(memory))
    # the second run reuses the checkpoint: one boot in all
    g5run.run(dataclasses.replace(job, cpu="o3"), tmp_path / "run2", progress=None)
    assert pmem.read_bytes() == memory
    assert (tmp_path / "calls.log").read_text().split() == ["boot", "run", "run"]
    # A whole command line given with the spec (the run id's) is the one booted with.
    whole = [*checkpoint.run_kernel_args(m, plan_from_dict(m)), "given=1"]
    g5run.run(dataclasses.replace(job, kernel_args=tuple(whole)), tmp_path / "run3",
              progress=None)
    info = json.loads((tmp_path / "run3" / "gem5.json").read_text())
    assert info["checkpoint"]["kernel_args"] == whole
    # gem5.json records the code hash the run id was made with (the job's), else hashes
    # the tree: a boot of minutes left time for an edit that was recorded as the run's.
    assert info["config_hash"] == binary.config_hash()
    g5run.run(dataclasses.replace(job, config_hash="as prepared"), tmp_path / "run4",
              progress=None)
    info = json.loads((tmp_path / "run4" / "gem5.json").read_text())
    assert info["config_hash"] == "as prepared"


def _sparse(path: Path) -> bool:
    """Whether ``path`` occupies less disk than its size (it has holes)."""
    return path.stat().st_blocks * 512 < path.stat().st_size


@pytest.mark.parametrize("memory", [
    bytes(3 << 20),                                                   # never touched
    b"\x01" + bytes((1 << 20) - 1),                                    # data, then a hole
    bytes(1 << 20) + b"\xff" * 100 + bytes(5000),                      # ends in a hole
    bytes(checkpoint.HOLE_BLOCK - 1) + b"\x02" + bytes(2 << 20) + b"\x03" * 777,
])
def test_checkpoint_memory_is_stored_uncompressed_and_sparse(tmp_path, memory):
    cpt = tmp_path / "cpt"
    cpt.mkdir()
    with gzip.open(cpt / "board.physmem.store0.pmem", "wb") as f:
        f.write(memory)
    (cpt / "m5.cpt").write_text("[board.physmem]\n")
    pmem = cpt / "board.physmem.store0.pmem"
    assert checkpoint.uncompress_memory(cpt) == [pmem]
    assert pmem.read_bytes() == memory
    assert _sparse(pmem)
    # Once stored so, it stays as it is; the other files of the checkpoint are untouched.
    assert checkpoint.uncompress_memory(cpt) == []
    assert pmem.read_bytes() == memory and (cpt / "m5.cpt").read_text() == "[board.physmem]\n"
    assert sorted(p.name for p in cpt.iterdir()) == ["board.physmem.store0.pmem", "m5.cpt"]


def test_an_interrupted_memory_conversion_keeps_the_compressed_file(tmp_path, monkeypatch):
    cpt = tmp_path / "cpt"
    cpt.mkdir()
    pmem = cpt / "board.physmem.store0.pmem"
    with gzip.open(pmem, "wb") as f:
        f.write(b"\x05" * (1 << 20))
    compressed = pmem.read_bytes()

    def interrupted(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(checkpoint.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.uncompress_memory(cpt)
    assert pmem.read_bytes() == compressed and list(cpt.iterdir()) == [pmem]
    monkeypatch.undo()
    checkpoint.uncompress_memory(cpt)
    assert pmem.read_bytes() == b"\x05" * (1 << 20)


def _stand_in_job(tmp_path, monkeypatch, readfile: str | bytes) -> g5run.Gem5Job:
    """A job of the clovertown-e5320-mup for the stand-in gem5 (STAND_IN)."""
    monkeypatch.setenv("GEM5", str(_stand_in(tmp_path, STAND_IN)))
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "calls.log"))
    m = load_machine("clovertown-e5320-mup").to_dict()
    plan = plan_from_dict(m)
    (tmp_path / "vmlinux").write_bytes(b"a stand-in kernel")    # the checkpoint key hashes it
    return g5run.Gem5Job(machine=m, plan=plan, cpu="o3", readfile=readfile,
                         kernel=checkpoint.GuestKernel(tmp_path / "vmlinux", "kernel-hash",
                                                       "image-hash"),
                         kernel_args=tuple(checkpoint.run_kernel_args(m, plan)))


def test_run_collects_what_the_guest_wrote_with_writefile(tmp_path, monkeypatch):
    job = _stand_in_job(tmp_path, monkeypatch, b"write\n")
    result = g5run.run(job, tmp_path / "run", progress=None)
    # The runner's report follows the console; the artifacts come from its tar file.
    assert result["console"] == "readfile said: write\n\n@@schedlab n end\n"
    assert result["artifacts"] == {"job/1/samples.txt": b"1 2"}
    assert not (tmp_path / "run" / "gem5" / g5run.READFILE).exists()   # the payload is gone


def test_failed_run_keeps_gem5_logs(tmp_path, monkeypatch):
    # A run directory is only published when complete, so the logs of a gem5 that died
    # are copied where the error message says they are.
    job = _stand_in_job(tmp_path, monkeypatch, "panic\n")
    with pytest.raises(binary.Gem5Error, match="killed by signal 6") as e:
        g5run.run(job, tmp_path / "run", progress=None)
    logs = Path(str(e.value).split("logs in ", 1)[1].split(";")[0].split()[0])
    assert logs.is_relative_to(tmp_path / "cache" / "gem5-failed")
    assert "the stand-in panicked" in (logs / "gem5.stderr").read_text()
