"""run.py's own set-up (standard library only): the shared virtual environment is built
once when two first commands start together, and test-only Debian packages are asked for
by 'run.py test' alone."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import sys
import threading
import time

from schedlab import paths

spec = importlib.util.spec_from_file_location("bootstrap", paths.REPO / "run.py")
bootstrap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bootstrap)


def test_a_second_first_command_waits_for_the_venv_instead_of_removing_it(tmp_path,
                                                                         monkeypatch, capsys):
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path))
    created = []
    monkeypatch.setattr(bootstrap.subprocess, "run", lambda *a, **k: created.append(a))
    key = hashlib.sha256((paths.REPO / "requirements.txt").read_bytes()
                         + sys.version.encode()).hexdigest()[:16]
    venv = tmp_path / "venv" / key
    venv.parent.mkdir()
    result = {}

    def second():
        result["python"] = bootstrap.ensure_venv()

    # Hold the lock as a first command creating the venv would.
    holder = open(venv.parent / f"{key}.lock", "w")
    fcntl.flock(holder, fcntl.LOCK_EX)
    waiter = threading.Thread(target=second)
    waiter.start()
    time.sleep(0.5)
    assert waiter.is_alive()                  # waiting, not removing the venv being built
    venv.mkdir()
    (venv / ".complete").write_text("")       # the first command finished it
    fcntl.flock(holder, fcntl.LOCK_UN)
    holder.close()
    waiter.join(10)
    assert result["python"] == venv / "bin" / "python"
    assert created == []                      # nothing removed or built again
    assert "waiting for another run.py" in capsys.readouterr().err


def test_test_only_packages_are_asked_for_by_the_tests_alone(monkeypatch):
    asked = []

    class Done:
        returncode, stdout = 1, ""
    monkeypatch.setattr(bootstrap.subprocess, "run",
                        lambda cmd, **k: asked.append(cmd[-1]) or Done())
    everyday = bootstrap.missing_debian_packages()
    for_tests = bootstrap.missing_debian_packages(for_tests=True)
    assert "chromium" not in everyday and "slurmd" not in everyday
    assert {"chromium", "slurmd", "faketime"} <= set(for_tests)
    assert set(everyday) < set(for_tests)
