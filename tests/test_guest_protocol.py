"""The runner protocol: rendering a spec the shell reads back exactly, parsing the console."""

from __future__ import annotations

import base64
import gzip
import subprocess

import pytest

from schedlab.guest.protocol import GuestJob, GuestSpec, parse_console

NASTY = "it's a \"test\" $(rm -rf /) `x` ; & |"


def test_rendered_spec_passes_arguments_through_the_shell_unchanged():
    spec = GuestSpec(nonce="n1", jobs=(GuestJob("w", ("/bin/w", NASTY, ""), reps=2, cpus="0-1",
                                                sched="fifo", prio=10),),
                     sysctl=(("kernel.x", "1"),))
    # Stand-in runner functions that print their arguments one per line.
    script = ('job() { for a in "$@"; do printf "%s\\n" "$a"; done; }\n'
              'sysctl_set() { printf "sysctl %s=%s\\n" "$1" "$2"; }\n'
              'sysctl_report() { echo "read back"; }\n'
              + spec.render() + "\nrun_spec\necho \"nonce=$NONCE\"\n")
    out = subprocess.run(["/bin/busybox", "sh", "-c", script], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    assert out[:2] == ["sysctl kernel.x=1", "read back"]
    assert out[2:13] == ["w", "2", "--policy", "fifo", "--prio", "10", "--cpus", "0-1", "--",
                         "/bin/w", NASTY]
    assert out[13] == "" and "nonce=n1" in out


def test_a_job_joins_region_scheduling_through_the_launcher_only_when_asked():
    plain = GuestSpec(nonce="n", jobs=(GuestJob("w", ("/bin/w",)),)).render()
    assert "--regions" not in plain
    spec = GuestSpec(nonce="n", jobs=(GuestJob("w", ("/bin/w",), regions="favour"),),
                     background=(GuestJob("b", ("/bin/b",), regions="join"),)).render()
    assert "--regions favour -- /bin/w" in spec and "--regions join -- /bin/b" in spec


def test_the_launcher_turns_the_caches_on_only_when_asked():
    plain = GuestSpec(nonce="n", jobs=(GuestJob("w", ("/bin/w",), warmup_us=100),)).render()
    assert "--caches-on-us" not in plain
    spec = GuestSpec(nonce="n", jobs=(GuestJob("w", ("/bin/w",), warmup_us=100,
                                               caches_on_us=0),)).render()
    assert "--warmup-us 100 --caches-on-us 0 -- /bin/w" in spec


def test_warm_caches_is_a_gem5_fast_forward_and_part_of_the_runs_identity():
    from schedlab.errors import UserError
    from schedlab.backends.gem5.backend import gem5_job
    from schedlab.runs import RunRequest, WorkloadRequest, prepare
    job = (WorkloadRequest("memlat", warmup=0.1),)
    for wrong in (dict(backend="qemu"), dict(backend="gem5", fast_forward=False),
                  dict(backend="gem5", cpu="atomic")):
        with pytest.raises(UserError, match="--warm-caches bypasses the caches"):
            prepare(RunRequest(machine="clovertown-e5320", jobs=job, warm_caches=0.03,
                               **wrong), progress=lambda line: None)
    with pytest.raises(UserError, match="must not be negative"):
        prepare(RunRequest(machine="clovertown-e5320", jobs=job, backend="gem5",
                           warm_caches=-1), progress=lambda line: None)
    # A region policy's job joins region scheduling either way (the launcher's options are
    # independent of each other).
    plain = prepare(RunRequest(machine="clovertown-e5320", jobs=job, backend="gem5",
                               policy="region-confine"), progress=lambda line: None)
    warm = prepare(RunRequest(machine="clovertown-e5320", jobs=job, backend="gem5",
                              policy="region-confine", warm_caches=0.03),
                   progress=lambda line: None)
    assert "--caches-on-us 30000 --regions join -- " in warm.guest.render()
    assert "--caches-on-us" not in plain.guest.render()
    assert "--regions join -- " in plain.guest.render()
    assert warm.run_id != plain.run_id and "caches_on_us" not in str(plain.spec)
    assert gem5_job(warm, progress=lambda line: None).settings.bypass_caches
    assert not gem5_job(plain, progress=lambda line: None).settings.bypass_caches
    # The launcher dumps each region's statistics; gem5's dump of the whole run is left out.
    assert not gem5_job(plain, progress=lambda line: None).settings.exit_stats


def test_trace_buffer_is_sized_per_backend():
    from schedlab.backends.backend import get_backend
    from schedlab.runs import RunRequest, WorkloadRequest, prepare
    sizes = {}
    for backend in ("qemu", "gem5"):
        request = RunRequest(machine="hector", backend=backend,
                             jobs=(WorkloadRequest("memlat", cpus="4"),))
        prepared = prepare(request, progress=lambda line: None)  # kernel and image cached
        assert prepared.spec["trace_buffer_kb"] == get_backend(backend).trace_buffer_kb
        text = prepared.guest.render()
        sizes[backend] = [line for line in text.splitlines()
                          if line.startswith("TRACE_BUFFER_KB=")]
    # gem5 runs are milliseconds of simulated time: a small buffer, little set-up work and
    # little of Hector's 16 MiB modules.
    assert sizes == {"qemu": ["TRACE_BUFFER_KB=8192"], "gem5": ["TRACE_BUFFER_KB=1024"]}
    # A request may ask for its own size (a long traced run): a run of its own, and a
    # size outside what the kernel can allocate is one line.
    import dataclasses

    import pytest

    from schedlab.errors import UserError
    bigger = dataclasses.replace(request, trace_buffer_kb=4096)
    prepared_bigger = prepare(bigger, progress=lambda line: None)
    assert "TRACE_BUFFER_KB=4096" in prepared_bigger.guest.render().splitlines()
    assert prepared_bigger.run_id != prepared.run_id
    with pytest.raises(UserError, match="64 KiB to 1 GiB"):
        prepare(dataclasses.replace(request, trace_buffer_kb=8), progress=lambda line: None)


def test_console_parsing_keeps_only_this_runs_lines():
    payload = base64.b64encode(gzip.compress(b"a,b\n1,2\n")).decode()
    console = "\n".join([
        "[    0.1] booting", "@@schedlab-ready",
        "@@schedlab n1 begin",
        "@@schedlab n1 fact cpus.online 0-3",
        "@@schedlab other fact cpus.online 0-7",
        "[    2.0] noise @@schedlab n1 fact node0.cpus 0-1",
        '@@schedlab n1 result {"job":"w","rep":1,"exit":0,"stdout":"x=1\\n"}',
        "@@schedlab n1 result {garbled",
        "@@schedlab n1 artifact-begin w/1/data.csv", payload[:10], payload[10:],
        "@@schedlab n1 artifact-end w/1/data.csv",
        "@@schedlab n1 end",
    ])
    report = parse_console(console, "n1")
    assert report.ready and report.begun and report.ended
    assert report.facts == {"cpus.online": "0-3", "node0.cpus": "0-1"}
    assert report.results == [{"job": "w", "rep": 1, "exit": 0, "stdout": "x=1\n"}]
    assert report.artifacts == {"w/1/data.csv": b"a,b\n1,2\n"}
    assert any("garbled" in e for e in report.errors)


def test_cut_off_artifact_is_an_error():
    report = parse_console("@@schedlab n artifact-begin f\nAAAA\n", "n")
    assert report.errors == ["artifact f was cut off"] and not report.artifacts


def test_output_cut_before_the_end_marker_fails_the_run(tmp_path, monkeypatch):
    # gem5 drops what the UART has not sent when it exits; a run whose console stops before
    # the runner's end marker may lack results and must not pass as complete.
    import hashlib
    from types import SimpleNamespace
    from schedlab.guest import programs, workloads
    from schedlab.runs import _results
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path))
    multicall = tmp_path / "workloads" / "overlay-x" / workloads.GUEST_BIN / programs.MULTICALL
    multicall.parent.mkdir(parents=True)
    multicall.write_bytes(b"the workloads' binary")
    spec = GuestSpec(nonce="n1", jobs=[])
    prepared = SimpleNamespace(
        guest=spec, request=SimpleNamespace(jobs=(), label=None, backend="qemu"), run_id="r",
        machine=SimpleNamespace(name="m"),
        spec={"policy": {"name": "default"}, "workloads": "overlay-x"},
        kernel=SimpleNamespace(hash="k"), image=SimpleNamespace(hash="i"))
    whole = "@@schedlab n1 begin\n@@schedlab n1 end\n"
    complete = _results(prepared, parse_console(whole, "n1"), {}, 1.0)
    assert complete["ok"]
    # The run records the bytes of the overlay its spec names.
    assert complete["artefacts"] == {
        "workloads": hashlib.sha256(b"the workloads' binary").hexdigest()[:16]}
    cut = _results(prepared, parse_console(whole[:-9], "n1"), {}, 1.0)
    assert not cut["ok"] and "end marker" in cut["errors"][0]
