"""schedlab.store: atomic publication of a directory and the clean-up of what a killed
process left behind."""

from __future__ import annotations

import os
import time

import pytest

from schedlab import store
from schedlab.store import STAGING_GRACE_S, publish_dir, remove_stale_staging


def test_published_directory_appears_whole(tmp_path):
    final = tmp_path / "run-1"
    with publish_dir(final) as staging:
        (staging / "results.json").write_text("{}")
        assert not final.exists() and staging.name.startswith(".run-1.")
    assert (final / "results.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["run-1"]


def test_a_failed_publication_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with publish_dir(tmp_path / "run-1") as staging:
            (staging / "half").write_text("")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_only_staging_folders_are_cleaned_up(tmp_path):
    # A killed process's staging folder, and a campaign's own hidden folder of logs, both
    # older than the grace period and unlocked: only the staging folder goes.
    old = time.time() - STAGING_GRACE_S - 10
    staging = tmp_path / ".run-1.ab12cd_3"
    logs = tmp_path / ".logs"
    for d in (staging, logs):
        d.mkdir()
        os.utime(d, (old, old))
    assert remove_stale_staging(tmp_path) == [staging]
    assert logs.is_dir() and not staging.exists()


def test_a_wait_for_a_held_lock_says_so_once(tmp_path):
    # Another process holds the lock: the waiter is told before it waits, and gets the lock
    # once the holder lets go; a free lock is taken without a word.
    import subprocess
    import sys

    lock = tmp_path / "build.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(1.5)",
         str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    said = []
    with store.locked(lock, waiting=lambda: said.append("waiting")):
        holder.wait(timeout=10)               # it let go by ending
    assert said == ["waiting"]
    with store.locked(lock, waiting=lambda: said.append("again")):
        pass
    assert said == ["waiting"]
