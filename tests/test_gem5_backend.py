"""Host side of the gem5 backend without gem5: errors, command lines, keys, log handling.

``execute`` is exercised with a stand-in executable (a tiny Python script that prints what
our gem5 script prints and then fails) -- only to test our process handling; no simulation
result here comes from it.
"""

import stat
import sys
from pathlib import Path

import pytest

from schedlab import gem5
from schedlab.gem5_plan import plan_from_dict
from schedlab.machine import load_machine

REPO = Path(__file__).resolve().parent.parent


def test_missing_gem5_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GEM5", raising=False)
    with pytest.raises(gem5.Gem5Error, match="GEM5 is not set.*gem5.fast"):
        gem5.find_gem5()
    monkeypatch.setenv("GEM5", "/nonexistent/gem5.fast")
    with pytest.raises(gem5.Gem5Error, match="not an executable"):
        gem5.find_gem5()


def test_doctor_reports_missing_gem5(monkeypatch):
    monkeypatch.delenv("GEM5", raising=False)
    rows = gem5.doctor()
    item, status, fix = rows[0]
    assert item == "gem5" and "missing" in status and "GEM5" in fix


@pytest.mark.parametrize("version,x86,ok", [("24.0.0.1", True, True), ("24.0", True, True),
                                             ("23.1.0.0", True, False),
                                             ("24.0.0.1", False, False)])
def test_version_check(version, x86, ok):
    info = gem5.Gem5Binary(Path("/x/gem5.fast"), version, x86, "h")
    if ok:
        gem5.check_version(info)
    else:
        with pytest.raises(gem5.Gem5Error):
            gem5.check_version(info)


def test_command_line():
    cmd = gem5.command(Path("/g/gem5.fast"), Path("/o"), mode="run", machine_json=Path("/m.json"),
                       kernel=Path("/k/vmlinux"), kernel_args=["console=ttyS0", "pci=off"],
                       cpu="o3", checkpoint_dir=Path("/c"), readfile=Path("/r.txt"))
    assert cmd[:4] == ["/g/gem5.fast", "--outdir", "/o", str(gem5.SCRIPT)]
    assert cmd[cmd.index("--command-line") + 1] == "console=ttyS0 pci=off"
    assert cmd[cmd.index("--cpu") + 1] == "o3"
    assert cmd[cmd.index("--readfile") + 1] == "/r.txt"


def test_checkpoint_key_covers_every_input():
    m = load_machine("clovertown-e5320-mup").to_dict()
    b = gem5.Gem5Binary(Path("/g"), "24.0.0.1", True, "binhash")
    base = gem5.checkpoint_key(b, m, "k", "i", ["a"])
    assert base == gem5.checkpoint_key(b, m, "k", "i", ["a"])
    m2 = load_machine("clovertown-e5320-mup", ["l2.size=8MiB"]).to_dict()
    b2 = gem5.Gem5Binary(Path("/g"), "24.0.0.1", True, "other")
    assert len({base, gem5.checkpoint_key(b2, m, "k", "i", ["a"]),
                gem5.checkpoint_key(b, m2, "k", "i", ["a"]),
                gem5.checkpoint_key(b, m, "k2", "i", ["a"]),
                gem5.checkpoint_key(b, m, "k", "i2", ["a"]),
                gem5.checkpoint_key(b, m, "k", "i", ["b"])}) == 6


def test_guest_boot_args_uniform_and_numa():
    m = load_machine("clovertown-e5320").to_dict()
    args = gem5.guest_boot_args(m, plan_from_dict(m))
    assert "pci=off" in args and not any(a.startswith("numa") for a in args)
    w = load_machine("westmere-x5660").to_dict()
    args = gem5.guest_boot_args(w, plan_from_dict(w))
    assert "numa=fake=2:10,16,16,10" in args
    assert "numa_emu_cpus=0-5:6-11" in args


def test_hector_nodes_too_small_for_numa_fake_is_a_clear_error():
    # Hector's 16 MiB stations are below the kernel's 32 MiB fake-node minimum.
    h = load_machine("hector").to_dict()
    with pytest.raises(gem5.UserError, match="minimum"):
        gem5.guest_boot_args(h, plan_from_dict(h))


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
    with pytest.raises(gem5.Gem5Error) as err:
        gem5.execute([str(exe)], tmp_path / "out", seen.append)
    assert "exited with status 1" in str(err.value)
    assert "panic: something broke" in str(err.value)
    assert any("M instructions" in s for s in seen)
    assert (tmp_path / "out" / "gem5.stdout").read_text().startswith("schedlab-progress")


def test_execute_returns_events(tmp_path):
    exe = _stand_in(tmp_path, """
print('schedlab-event ' + json.dumps({'event': 'workend', 'tick': 7}), flush=True)
""")
    result = gem5.execute([str(exe)], tmp_path / "out")
    assert result["events"] == [{"event": "workend", "tick": 7}]


def test_execute_kill_is_reported(tmp_path):
    exe = _stand_in(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    with pytest.raises(gem5.Gem5Error, match="killed by signal 9"):
        gem5.execute([str(exe)], tmp_path / "out")


def test_gem5_side_code_compiles():
    # The gem5-side files import m5, so they cannot be imported here; check their syntax.
    for path in [gem5.SCRIPT, *gem5.COMPONENTS.glob("*.py")]:
        compile(path.read_text(), str(path), "exec")


def test_config_hash_is_stable():
    h = gem5.config_hash()
    assert len(h) == 64 and h == gem5.config_hash()


def test_roi_is_first_dump_at_or_after_each_workend():
    dumps = [{"finalTick": 100}, {"finalTick": 250}, {"finalTick": 260}, {"finalTick": 900}]
    gem5.label_roi(dumps, [{"event": "workbegin", "tick": 50}, {"event": "workend", "tick": 250},
                           {"event": "workend", "tick": 800}])
    assert [d["schedlab.roi"] for d in dumps] == [0, 1, 0, 1]


def test_run_kernel_args_keep_base_and_add_policy_args():
    m = load_machine("clovertown-e5320-mup").to_dict()
    args = gem5.run_kernel_args(m, plan_from_dict(m), ["sched.foo=1", "pci=off"])
    assert args[:4] == ["console=ttyS0", "acpi=off", "pci=off", "schedlab.backend=gem5"]
    assert args.count("pci=off") == 1 and args[-1] == "sched.foo=1"


def test_builds_use_given_kernel_object():
    class Build:  # what KernelBuild / GuestImage expose
        vmlinux = Path("/k/vmlinux")
        hash = "k"
    kernel, image = gem5._builds({"kernel": Build(), "image": {"hash": "i"}}, None)
    assert kernel.vmlinux == Path("/k/vmlinux") and image == {"hash": "i"}
    with pytest.raises(gem5.UserError, match="no image build"):
        gem5._builds({"kernel": "hash-only"}, None)
