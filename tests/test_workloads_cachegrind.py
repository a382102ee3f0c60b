"""Base-vector footprints verified with cachegrind.  A BV sized to a cache misses in it on
every pass and almost never in one twice as large; and the footprint is bracketed tightly:
every line misses in a cache of 3/4 the size, (almost) none in one of 5/4 (same number of
sets, 6 and 10 ways instead of 8).  Misses per pass are the difference of two runs with
different --passes, divided by the difference, so start-up and cold misses cancel."""

import shutil

import pytest

from schedlab.guest import characterise, programs
from schedlab.guest import workloads as W

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")

KB = 1024
# Two otherwise roomy caches; the level under test is set per case.
BASE = {"I1": (64 * KB, 8, 64), "D1": (64 * KB, 8, 64), "LL": (16 * KB * KB, 16, 64)}
P1, P2 = 10, 60


@pytest.fixture(scope="module")
def bindir():
    return programs.build_all(progress=lambda s: None) / W.GUEST_BIN


def per_pass(bindir, name, args, level, size, assoc=8, line=64, base=BASE, passes=(P1, P2)):
    geo = dict(base)
    geo[level] = (size, assoc, line)
    if level in ("I1", "D1") and geo["LL"][0] < size * 2:
        geo["LL"] = (size * 4, 16, line)
    events = {"I1": ["I1mr"], "D1": ["D1mr", "D1mw"], "LL": ["ILmr", "DLmr", "DLmw"]}[level]
    counts = []
    for n in passes:
        ev = characterise.cachegrind([str(bindir / name), *args, "--passes", str(n)], geo)
        counts.append(sum(ev.get(e, 0) for e in events))
    return (counts[1] - counts[0]) / (passes[1] - passes[0])


@pytest.mark.parametrize("name,level,footprint,extra", [
    ("bv_l1i", "I1", 32 * KB, []),
    ("bv_l1i", "I1", 16 * KB, []),
    ("bv_l1d", "D1", 32 * KB, []),
    ("bv_l2", "LL", 4 * KB * KB, ["--stride", "64"]),
])
def test_base_vector_footprint(bindir, name, level, footprint, extra):
    args = ["--size", f"{footprint // KB}KiB", *extra]
    lines = footprint // 64
    own = per_pass(bindir, name, args, level, footprint, 8)
    double = per_pass(bindir, name, args, level, 2 * footprint, 16)
    smaller = per_pass(bindir, name, args, level, footprint * 3 // 4, 6)
    larger = per_pass(bindir, name, args, level, footprint * 5 // 4, 10)
    # Sized to the cache: the footprint plus the program's few other lines overflow some
    # sets, which then miss on every pass.
    assert own >= 1, f"{name} {footprint}B in an equal {level}: {own} misses/pass"
    # Twice the cache, or only a quarter more: everything fits, (almost) no misses.
    assert double <= 0.5, f"{name} in a {level} twice as large: {double} misses/pass"
    assert larger <= 0.5, f"{name} in a {level} 5/4 as large: {larger} misses/pass"
    # A quarter less: LRU thrashes, every line of the footprint misses every pass.
    assert smaller >= 0.95 * lines, f"{name} in a {level} 3/4 as large: {smaller}/{lines}"


def test_bv_0_has_no_footprint(bindir):
    # Niagara's small L1s (16 KB I1 4-way 32 B lines, 8 KB D1 4-way; cachegrind's shortest
    # line is 32 B, Niagara's D1 has 16 B).
    small = {"I1": (16 * KB, 4, 32), "D1": (8 * KB, 4, 32), "LL": (4 * KB * KB, 16, 64)}
    for level in ("I1", "D1", "LL"):
        geo = small[level]
        m = per_pass(bindir, "bv_0", [], level, *geo, base=small, passes=(10, 1010))
        assert m <= 0.01, f"bv_0 misses {m}/pass in {level}"


def test_bv_l1d_has_negligible_code_and_bv_l1i_negligible_data(bindir):
    # Many passes: start-up misses vary by a few between runs (address-space randomisation
    # of the stack and vDSO), which must not look like a per-pass footprint.
    many = (10, 1010)
    assert per_pass(bindir, "bv_l1d", ["--size", "32KiB"], "I1", 16 * KB, 4, 32,
                    passes=many) <= 0.01
    assert per_pass(bindir, "bv_l1i", ["--size", "32KiB"], "D1", 8 * KB, 4, 32, passes=many) <= 0.01
