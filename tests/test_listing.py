"""reproduce --list's rows are kept under a key of everything they are made from: read back
while nothing changed, made anew when anything did (schedlab.campaigns.listing)."""

from __future__ import annotations

import os

from schedlab import paths
from schedlab.campaigns import listing


def test_rows_are_read_back_until_an_input_changes(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    (tree / "configs").mkdir(parents=True)
    catalogue = tree / "configs" / "machines.toml"
    catalogue.write_text("a")
    versions = tree / "versions.toml"
    versions.write_bytes(paths.VERSIONS.read_bytes())
    monkeypatch.setattr(paths, "REPO", tree)
    monkeypatch.setattr(paths, "VERSIONS", versions)
    monkeypatch.setattr(listing, "INPUTS", ("configs",))
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    made = []
    monkeypatch.setattr(listing, "compute", lambda: made.append(1) or [{"n": len(made)}])
    said = []
    assert listing.rows(say=said.append) == [{"n": 1}]
    assert len(said) == 1 and said[0].startswith("listing: computing")  # a wait says so
    assert listing.rows(say=said.append) == [{"n": 1}] and len(made) == 1  # read back
    assert len(said) == 1                                             # silently
    catalogue.write_text("ab")                                        # an input changed
    assert listing.rows() == [{"n": 2}]
    os.utime(versions, ns=(1, 1))                                     # the pins changed
    assert listing.rows() == [{"n": 3}]
    (tree / "configs" / "new.toml").write_text("")                    # a file was added
    assert listing.rows() == [{"n": 4}]


def test_the_real_rows_name_every_experiment():
    from schedlab.campaigns.experiment import registry
    names = [r["name"] for r in listing.rows()]
    assert names == list(registry())
