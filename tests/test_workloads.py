"""Workload registry, build and native runs: every workload at smoke size, bad arguments,
parallel kernels independent of p, the stream driver, user programs, the CLI."""

import json
import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from schedlab import cli
from schedlab.guest import characterise, programs
from schedlab.guest import workloads as W
from schedlab.errors import UserError

# The workloads compiled here (the real programs of Debian packages: test_real_programs.py).
REGISTRY = programs.compiled(W.load_registry())
KERNELS = ["fft", "hough", "mm", "neural", "pde", "simplex"]
SPEC = ["art", "crafty", "gap", "gcc", "gzip", "mcf", "parser", "twolf"]
THREADED = KERNELS + ["blackscholes", "streamcluster", "swaptions", "raytrace"]
SPEC2006 = ["libquantum", "omnetpp", "h264ref", "namd", "povray", "sphinx"]


@pytest.fixture(scope="session")
def overlay() -> Path:
    return programs.build_all(progress=lambda s: None)


@pytest.fixture(scope="session", autouse=True)
def scratch(tmp_path_factory):
    """Workloads may write files beside them (the mixer's CSVs): keep them out of the repo."""
    global SCRATCH
    SCRATCH = tmp_path_factory.mktemp("workload-cwd")


SCRATCH = None


def run(overlay, name, args, timeout=60, env=None):
    return subprocess.run([str(overlay / W.GUEST_BIN / name), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=SCRATCH,
                          env={**os.environ, "SCHEDLAB_OUT": str(SCRATCH), **(env or {})})


def test_registry_has_every_study_program():
    for name in ["bv_0", "bv_l1d", "bv_l1i", "bv_l2", "memlat", "streams", *KERNELS, *SPEC]:
        assert name in REGISTRY, name
    for name in SPEC:
        assert REGISTRY[name].substitutes.startswith("SPEC CPU2000")
    for name in SPEC2006:
        assert REGISTRY[name].substitutes.startswith("SPEC CPU2006") and 3 in REGISTRY[name].studies
    assert "raytrace" in REGISTRY and "mediaserver" in REGISTRY
    kinds = [w.kind for w in REGISTRY.values()]
    assert kinds.count("mibench") + kinds.count("parsec") >= 8
    assert kinds.count("parsec") >= 2
    for w in REGISTRY.values():
        assert "smoke" in w.sizes and w.summary and w.studies
        assert w.stops_by_itself("smoke"), f"{w.name}: smoke size must terminate"


def test_build_is_cached_and_overlay_is_complete(overlay, monkeypatch):
    # Cached means nothing is compiled (not "fast", which a busy host can make slow).
    def no_compiler(cmd, what):
        raise AssertionError(f"compiled {what} although the overlay is cached")
    monkeypatch.setattr(programs, "_run_compiler", no_compiler)
    lines = []
    again = programs.build_all(progress=lines.append)
    assert again == overlay
    assert not any("compiling" in ln for ln in lines)
    data = json.loads((overlay / W.GUEST_REGISTRY).read_text())
    assert set(data) == set(REGISTRY)
    for name, entry in data.items():
        exe = overlay / W.GUEST_BIN / name
        assert entry["binary"] == f"/schedlab/bin/{name}"
        assert entry["sizes"]["smoke"]["args"] == REGISTRY[name].args("smoke")
        head = exe.read_bytes()
        assert head[:4] == b"\x7fELF" and not programs._elf_is_dynamic(head), \
            f"{name} is not static"
        # One multi-call binary holds them all (one copy of libc in the guest's initramfs).
        assert exe.is_symlink() and os.readlink(exe) == programs.MULTICALL
    multicall = overlay / W.GUEST_BIN / programs.MULTICALL
    assert multicall.stat().st_size < 4 << 20


def test_multicall_binary_dispatches_by_name(overlay):
    multicall = overlay / W.GUEST_BIN / programs.MULTICALL
    by_link = subprocess.run([str(overlay / W.GUEST_BIN / "sha"), *W.get("sha").args("smoke")],
                             capture_output=True, text=True)
    by_arg = subprocess.run([str(multicall), "sha", *W.get("sha").args("smoke")],
                            capture_output=True, text=True)
    checksum = [ln for ln in by_link.stdout.splitlines() if ln.startswith("digest")]
    assert by_link.returncode == by_arg.returncode == 0 and checksum
    assert checksum == [ln for ln in by_arg.stdout.splitlines() if ln.startswith("digest")]
    unknown = subprocess.run([str(multicall), "nosuch"], capture_output=True, text=True)
    assert unknown.returncode == 127 and "no workload named nosuch" in unknown.stderr


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_smoke_run_passes_its_check(overlay, name):
    w = REGISTRY[name]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run(overlay, name, w.args("smoke"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time, not wall time: what the smoke size costs, whatever else the host runs.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert r.returncode == 0, r.stderr
    metrics = W.parse_output(r.stdout)
    assert metrics, "no key=value output"
    assert w.check(metrics) == []
    assert w.expect("smoke"), f"{name}: smoke size has nothing to check"
    # "well under a second" natively (0.25 s of CPU at most on our hosts).
    assert cpu < 1.0, f"{name} smoke took {cpu:.2f} s of CPU time"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_wrong_argument_gives_one_line_error(overlay, name):
    r = run(overlay, name, [*REGISTRY[name].args("smoke"), "--no-such-option", "1"])
    assert r.returncode != 0
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(f"{name}:")


@pytest.mark.parametrize("name,args", [
    ("memlat", ["--region-size", "100", "--access-time", "4"]),
    ("memlat", ["--region-size", "64KiB"]),
    ("memlat", ["--region-size", "64KiB", "--access-time", "4", "--frames", "yes"]),
    ("bv_l1i", ["--size", "1MiB", "--passes", "1"]),
    ("bv_l1d", ["--size", "4Kx", "--passes", "1"]),
    ("fft", ["--n", "100"]),
    ("mm", ["--threads", "0"]),
    ("streams", ["--apps", "fft,nosuch"]),
])
def test_bad_values_are_rejected(overlay, name, args):
    r = run(overlay, name, args)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_memlat_seeded_frames_come_from_the_seeds_choice(overlay):
    """--frames seeded: the regions' pages take the frames the seed chose (read back from
    /proc/self/pagemap, which shows frames to root only), the traversal stays the seed's."""
    if not Path("/proc/self/pagemap").exists() or os.geteuid() != 0:
        pytest.skip("page frames are visible to root only (/proc/self/pagemap)")
    args = ["--region-size", "1MiB", "--access-time", "4096", "--accesses", "100000"]
    # One CPU: the frames given back wait on that CPU's free list.
    pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))]
    out = {}
    for frames in ("kernel", "seeded"):
        r = subprocess.run([*pin, str(overlay / W.GUEST_BIN / "memlat"), *args, "--seed", "5",
                            "--frames", frames], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out[frames] = W.parse_output(r.stdout)
    assert out["seeded"]["checksum"] == out["kernel"]["checksum"]
    assert out["seeded"]["frames_fnv"] != "0x0000000000000000"
    assert "frames_seeded_share" not in out["kernel"]
    assert float(out["seeded"]["frames_seeded_share"]) > 0.9, out["seeded"]


def test_corrupted_input_is_detected(overlay, tmp_path):
    packed = tmp_path / "text.slz"
    r = run(overlay, "gzip", ["--size", "64KiB", "--compress-to", str(packed)])
    assert r.returncode == 0, r.stderr
    r = run(overlay, "gzip", ["--decompress", str(packed)])
    assert r.returncode == 0 and W.parse_output(r.stdout)["bytes"] == 65536
    data = bytearray(packed.read_bytes())
    for offset in (0, 20, len(data) // 2, len(data) - 3):
        bad = bytearray(data)
        bad[offset] ^= 0x5A
        broken = tmp_path / f"bad{offset}.slz"
        broken.write_bytes(bytes(bad))
        r = run(overlay, "gzip", ["--decompress", str(broken)])
        assert r.returncode != 0, f"corruption at {offset} went unnoticed"
        assert len(r.stderr.strip().splitlines()) == 1 and "gzip:" in r.stderr
    r = run(overlay, "gzip", ["--decompress", str(tmp_path / "missing.slz")])
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1


def test_check_detects_a_wrong_result():
    w = REGISTRY["memlat"]
    good = W.parse_output(run(programs.build_all(lambda s: None), "memlat", w.args("smoke")).stdout)
    assert w.check(good) == []
    assert w.check({**good, "checksum": "0x0"}) and w.check({})


@pytest.mark.parametrize("kernel", THREADED)
def test_parallel_kernel_same_result_for_every_parallelism(overlay, kernel):
    sums = {}
    base = REGISTRY[kernel].args("smoke")
    if "--threads" in base:
        i = base.index("--threads")
        base = base[:i] + base[i + 2:]
    for p in (1, 2, 3, 4, 6, 8):
        r = run(overlay, kernel, [*base, "--threads", str(p)])
        assert r.returncode == 0, r.stderr
        m = W.parse_output(r.stdout)
        assert m["threads"] == p
        sums[p] = m["checksum"]
    assert len(set(sums.values())) == 1, sums


def test_stream_driver_records_one_response_time_per_job(overlay):
    r = run(overlay, "streams", ["--streams", "3", "--threads", "2", "--repeat", "2",
                                 "--apps", "mm,pde"])
    assert r.returncode == 0, r.stderr
    m = W.parse_output(r.stdout)
    jobs = {k: v for k, v in m.items() if k.startswith("job.")}
    assert m["jobs"] == 3 * 2 * 2 == len(jobs)
    assert all(isinstance(v, float) and v > 0 for v in jobs.values())
    # each stream runs its own rotation of the list
    assert {k for k in jobs if k.startswith("job.0.0.")} == {"job.0.0.mm"}
    assert {k for k in jobs if k.startswith("job.1.0.")} == {"job.1.0.pde"}


def test_stream_driver_records_each_jobs_pid_start_and_end(overlay):
    r = run(overlay, "streams", ["--streams", "2", "--threads", "2", "--repeat", "2",
                                 "--apps", "mm,pde"])
    assert r.returncode == 0, r.stderr
    m = W.parse_output(r.stdout)
    spans = {k[len("span."):]: v.split() for k, v in m.items() if k.startswith("span.")}
    assert spans.keys() == {k[len("job."):] for k in m if k.startswith("job.")}
    assert isinstance(m["clock0"], float) and m["clock0"] > 0
    pids = [int(v[0]) for v in spans.values()]
    assert len(set(pids)) == len(pids) and min(pids) > 0
    for key, (_, start, end) in spans.items():
        # the response time is end - start, each printed to a microsecond
        assert float(end) - float(start) == pytest.approx(m[f"job.{key}"], abs=2e-6)
    # a stream's jobs run one after another: each starts after its predecessor ended
    for s in (0, 1):
        mine = sorted((int(k.split(".")[1]), float(v[1]), float(v[2]))
                      for k, v in spans.items() if k.startswith(f"{s}."))
        assert all(b[1] >= a[2] for a, b in zip(mine, mine[1:])), mine


def test_stream_driver_fails_when_a_job_fails(overlay, tmp_path):
    (tmp_path / "mm").write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "mm").chmod(0o755)
    r = run(overlay, "streams", ["--bindir", str(tmp_path), "--apps", "mm"])
    assert r.returncode != 0 and "failed" in r.stderr and len(r.stderr.splitlines()) == 1


def test_stream_driver_gives_each_application_its_own_extra_arguments(overlay, tmp_path):
    for app in ("mm", "pde"):
        (tmp_path / app).write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/{app}.args\n')
        (tmp_path / app).chmod(0o755)
    r = run(overlay, "streams", ["--bindir", str(tmp_path), "--apps", "mm,pde", "--streams",
                                 "2", "--threads", "3", "--app-args", "mm=--n 96  --x y"])
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "mm.args").read_text().splitlines() == ["--threads 3 --n 96 --x y"] * 2
    assert (tmp_path / "pde.args").read_text().splitlines() == ["--threads 3"] * 2


@pytest.mark.parametrize("app_args, message", [
    ("mm", "--app-args wants APP=ARGS"),
    ("fft=--n 64", "--app-args names fft, which --apps does not run"),
    ("mm=" + " a" * 9, "more than 8 arguments"),
])
def test_stream_driver_refuses_bad_app_args_in_one_line(overlay, app_args, message):
    r = run(overlay, "streams", ["--apps", "mm", "--app-args", app_args])
    assert r.returncode != 0 and message in r.stderr and len(r.stderr.splitlines()) == 1


UNTIL_STOPPED = [(n, s) for n, w in sorted(REGISTRY.items()) for s in w.sizes
                 if not w.stops_by_itself(s)]


@pytest.mark.parametrize("name,size", UNTIL_STOPPED)
def test_until_stopped_sizes_end_cleanly_on_sigterm(overlay, name, size):
    p = subprocess.Popen([str(overlay / W.GUEST_BIN / name), *REGISTRY[name].args(size)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRATCH)
    # Wait until its SIGTERM handler is installed (SigCgt bit 14), however busy the machine.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        status = Path(f"/proc/{p.pid}/status").read_text()
        caught = int(next(ln.split()[1] for ln in status.splitlines()
                          if ln.startswith("SigCgt")), 16)
        if caught & (1 << (15 - 1)):
            break
        time.sleep(0.01)
    # Then let it work for 0.1 s of CPU time (not of wall time, which a busy host stretches
    # while the program gets little CPU) before stopping it.
    ticks = 0.1 * os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        if int(fields[11]) + int(fields[12]) >= ticks:     # utime + stime, all threads
            break
        time.sleep(0.01)
    assert p.poll() is None, f"{name} {size} ended by itself: {p.stderr.read()}"
    p.terminate()
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    m = W.parse_output(out)
    assert m.get("passes", m.get("accesses", 0)) > 0


def test_parse_output():
    m = W.parse_output("a=1\nb=2.5e3\nc=0x1f\nnoise line\nd = x y\n")
    assert m == {"a": 1, "b": 2500.0, "c": "0x1f", "d": "x y"}


def test_plain_output_is_every_line_that_is_not_a_metric():
    text = "hello\na=1\n  two words = 3\n\nb = 2\nbye\n\n\n"
    assert W.plain_output(text) == ["hello", "  two words = 3", "", "bye"]
    assert W.parse_output(text) == {"a": 1, "b": 2}


def test_bad_registry_entry_is_one_line_user_error(tmp_path):
    d = tmp_path / "broken"
    d.mkdir()
    (d / "x.c").write_text("int main(void){return 0;}\n")
    (d / "workload.toml").write_text('summary = "s"\nstudies = [5]\nsources = ["x.c"]\n'
                                     '[sizes.smoke]\nargs = []\n')
    with pytest.raises(UserError, match="studies") as e:
        W.load_registry(tmp_path)
    assert "\n" not in str(e.value)
    (d / "workload.toml").write_text('summary = "s"\nstudies = [1]\nsources = ["missing.c"]\n'
                                     '[sizes.smoke]\nargs = []\n')
    with pytest.raises(UserError, match="missing.c"):
        W.load_registry(tmp_path)


def test_user_program(tmp_path, overlay):
    src = tmp_path / "hello.c"
    src.write_text('#include <stdio.h>\nint main(void){puts("x=1");return 0;}\n')
    exe = programs.build_user_program(src)
    assert subprocess.run([exe], capture_output=True, text=True).stdout == "x=1\n"
    assert programs.build_user_program(src) == exe
    static = overlay / W.GUEST_BIN / "bv_0"
    assert programs.build_user_program(static) == static.resolve()
    dyn = tmp_path / "dyn"
    subprocess.run(["gcc", str(src), "-o", str(dyn)], check=True)
    assert programs.build_user_program(dyn) == dyn.resolve() and programs.is_dynamic(dyn)
    assert not programs.is_dynamic(exe)
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void){ return undeclared; }\n")
    with pytest.raises(UserError, match="undeclared"):
        programs.build_user_program(bad)
    with pytest.raises(UserError):
        programs.build_user_program(tmp_path / "notes.txt")


BAD_PROGRAM = """#include <stdio.h>

int main(void)
{
\tint unused;
\tprintf("%d\\n", undeclared);
\treturn missing();
}
"""


def test_user_program_compile_errors_are_whole_and_name_the_users_file(tmp_path):
    src = tmp_path / "my dir" / "bad.c"
    src.parent.mkdir()
    src.write_text(BAD_PROGRAM)
    with pytest.raises(UserError) as e:
        programs.build_user_program(src)
    message = str(e.value)
    # The oracle: gcc itself, on the user's file where it is, with the guest's flags.
    direct = subprocess.run(programs.guest_compile_command([src], tmp_path / "a.out"),
                            capture_output=True, text=True)
    diagnostics = [ln for ln in direct.stderr.splitlines() if ln.startswith(f"{src}:")]
    assert len([d for d in diagnostics if ": error: " in d]) == 3   # all three, not the first
    for line in diagnostics:
        assert line in message.splitlines(), line
    assert f"{src}:6:" in message and f"{src}:7:" in message and f"{src}:5:" in message
    assert "user-programs" not in message and str(programs.cache_dir()) not in message
    assert message.startswith(f"building {src} failed")


def test_cli_lists_and_shows(overlay):
    runner = CliRunner()
    r = runner.invoke(cli.workloads_command, [])
    assert r.exit_code == 0, r.output
    for name in REGISTRY:
        assert f"\n{name} " in "\n" + r.output
    r = runner.invoke(cli.workloads_command, ["memlat"])
    assert r.exit_code == 0 and "--region-size" in r.output and "Lee & Schwan" in r.output
    r = runner.invoke(cli.workloads_command, ["nosuch"])
    assert isinstance(r.exception, UserError) and "run.py workloads" in str(r.exception)


def test_every_workload_is_characterised():
    chars, made_from = characterise.load_characterisation(with_sources=True)
    for name, w in REGISTRY.items():
        if w.kind == "driver":
            continue
        assert name in chars, f"{name}: run 'python3 run.py workloads {name} --characterise'"
        # Measured from today's sources (a change to workloads/common/ changes them all).
        assert made_from.get(name) == w.content_hash(), \
            f"{name}'s characterisation is stale: run 'python3 run.py workloads --characterise'"
        assert {"clovertown-e5320", "niagara"} <= set(chars[name])
        for rates in chars[name].values():
            assert rates["instructions"] > 0
            for key in ("i1_miss_rate", "d1_miss_rate", "ll_miss_rate"):
                assert 0 <= rates[key] <= 1
    # The stored data agrees with the base vectors' purpose: a 32 KiB code footprint thrashes
    # Niagara's 16 KB I1 and (nearly) fits Clovertown's 32 KB one; bv_l2's 4 MiB of data
    # thrashes Niagara's 3 MB L2 and fits Westmere's 12 MB L3 (after the cold misses).
    l1i = chars["bv_l1i"]
    assert l1i["niagara"]["i1_miss_rate"] > 10 * l1i["clovertown-e5320"]["i1_miss_rate"]
    l2 = chars["bv_l2"]
    assert l2["niagara"]["ll_mpki"] > 5 * l2["westmere-x5660"]["ll_mpki"]


def _roi_run(overlay, name, args, roi_ns):
    out = run(overlay, name, args, env={"SCHEDLAB_ROI_START_NS": str(roi_ns)})
    assert out.returncode == 0, out.stderr
    return W.parse_output(out.stdout)


ROI_KEYS = {  # workload, its args, (count over its life, over the ROI), the ROI's rate
    "memlat": (["--region-size", "64KiB", "--access-time", "4096", "--accesses", "2000000"],
               ("accesses", "roi_accesses"), "roi_accesses_per_sec"),
    "mediaserver": (["--requests", "20", "--rate", "400"], ("requests", "roi_requests"), None),
    "raytrace": (["--threads", "2"], ("height", "roi_rows"), "roi_rows_per_sec"),
}


@pytest.mark.parametrize("name", sorted(ROI_KEYS))
def test_whole_life_workloads_report_over_the_announced_region_of_interest(overlay, name):
    args, (life, roi), rate = ROI_KEYS[name]
    started_long_ago = _roi_run(overlay, name, args, 1)
    assert started_long_ago[roi] == started_long_ago[life] > 0
    never = _roi_run(overlay, name, args, time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 10**12)
    assert never[roi] == 0 and never[life] == started_long_ago[life]
    if rate:
        m = started_long_ago
        assert m[rate] == pytest.approx(m[roi] / m["roi_seconds"], rel=1e-3)
    if name == "raytrace":   # CPU seconds of its threads in the region, none without one
        assert 0 < started_long_ago["roi_cpu_seconds"] and never["roi_cpu_seconds"] == 0


STOPPABLE = {  # workload, args that run for many seconds, (count over its life, its whole)
    "mediaserver": (["--requests", "100000", "--rate", "1000", "--frame-kb", "1"],
                    "requests", 100000),
    "raytrace": (["--threads", "2", "--width", "4000", "--height", "4000"], "roi_rows", 4000),
}


@pytest.mark.parametrize("name", sorted(STOPPABLE))
def test_whole_life_workloads_stopped_by_sigterm_report_what_they_did(overlay, name):
    """The launcher stops a job at its duration with SIGTERM (study 3's gem5 ROIs are
    bounded so): the program ends at once, with exit 0 and its numbers so far."""
    args, count, whole = STOPPABLE[name]
    proc = subprocess.Popen([str(overlay / W.GUEST_BIN / name), *args], cwd=SCRATCH,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    m = W.parse_output(out)
    assert 0 < m[count] < whole


def test_mediaserver_counts_only_requests_arriving_in_the_region_of_interest(overlay):
    # 100 requests at 200/s arrive over 0.5 s; the region starts 0.15 s in, so whatever the
    # host's load does to the start-up (a few ms), some requests fall on each side.
    roi = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 150_000_000
    m = _roi_run(overlay, "mediaserver", ["--requests", "100", "--rate", "200"], roi)
    assert 0 < m["roi_requests"] < m["requests"] == 100
    assert m["roi_deadline_misses"] <= m["deadline_misses"]


def test_mediaserver_writes_each_requests_response_time_for_the_distribution(overlay,
                                                                           tmp_path):
    roi = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 150_000_000
    out = run(overlay, "mediaserver", ["--requests", "100", "--rate", "200"],
              env={"SCHEDLAB_ROI_START_NS": str(roi), "SCHEDLAB_OUT": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    m = W.parse_output(out.stdout)
    lines = (tmp_path / "responses.csv").read_text().splitlines()
    assert lines[0] == "arrival_ms,response_ms,in_roi" and len(lines) == 1 + 100
    rows = [tuple(float(x) for x in ln.split(",")) for ln in lines[1:]]
    arrivals = [a for a, _, _ in rows]
    assert arrivals == sorted(arrivals)           # one per request, in arrival order
    assert all(flag == (a >= 0) for a, _, flag in rows)
    inside = sorted(r for a, r, flag in rows if flag)
    assert len(inside) == m["roi_requests"] > 0
    assert inside[-1] == pytest.approx(m["roi_max_ms"], abs=1e-3)
    assert sum(r > 5.0 for _, r, _ in rows) == m["deadline_misses"]   # 200/s: 5 ms


def test_bad_region_of_interest_start_is_one_line_error(overlay):
    out = run(overlay, "memlat", REGISTRY["memlat"].args("smoke"),
              env={"SCHEDLAB_ROI_START_NS": "soon"})
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "SCHEDLAB_ROI_START_NS" in out.stderr


def test_a_stopped_run_s_expected_statuses_include_a_program_s_own():
    # Killed by the launcher's SIGTERM (143) or ended at once (0); POV-Ray catches the
    # signal, cancels its render and exits 2 (its user abort), which a stopped run expects.
    assert W.get("memlat").stop_statuses == {0, 143}
    assert W.get("debian-povray").stop_statuses == {0, 2, 143}
    from schedlab.guest.packages import parse_program
    with pytest.raises(UserError, match="stopped_exit must be an exit status"):
        parse_program({"packages": ["x"], "path": "/usr/bin/x", "stopped_exit": 0}, "w")
