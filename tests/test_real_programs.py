"""Real programs from Debian packages (schedlab.guest.packages, schedlab.guest.inputs): the
lock, the files a run carries, the inputs, and every real program of the registry run on
QEMU with its smoke input, its output checked by an oracle independent of the program."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from schedlab.errors import UserError
from schedlab.guest import inputs, packages, workloads
from schedlab.runs import RunRequest, WorkloadRequest, execute, prepare

needs_apt = pytest.mark.skipif(not shutil.which("apt-get") or not shutil.which("dpkg-deb"),
                               reason="real programs come from Debian packages: apt-get and "
                                      "dpkg-deb are needed (a Debian host)")
REAL = sorted(n for n, w in workloads.load_registry().items() if w.is_real_program)


# ---------------------------------------------------------------- inputs
def test_the_inputs_prng_is_splitmix64():
    # Reference values of Steele, Lea and Flood's splitmix64 from state 0 (as in Vigna's
    # splitmix64.c): the stream the generators rely on, fixed across Python versions.
    rng = inputs.SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                              0x06C45D188009454F]
    # The vectorised block is the same stream.
    one, many = inputs.SplitMix64(5), inputs.SplitMix64(5)
    assert [one.next() for _ in range(100)] == [int(v) for v in many.block(100)]
    assert one.next() == many.next()


@pytest.mark.parametrize("definition", [
    {"generator": "text", "bytes": 20_000, "seed": 3},
    {"generator": "c_program", "functions": 5, "seed": 3},
    {"generator": "ppm", "width": 40, "height": 30, "seed": 3},
    {"generator": "wav", "seconds": 0.1, "rate": 8000, "seed": 3},
])
def test_an_input_is_a_function_of_its_definition(definition):
    name = definition["generator"]
    params = {k: v for k, v in definition.items() if k != "generator"}
    first = inputs.GENERATORS[name](**params)
    assert first == inputs.GENERATORS[name](**params)
    other = inputs.GENERATORS[name](**{**params, "seed": 4})
    assert other != first
    assert inputs.identity(definition) != inputs.identity({**definition, "seed": 4})


def test_generated_inputs_are_what_their_readers_take(tmp_path):
    text = inputs.text(200_000, seed=1)
    assert len(text) == 200_000 and text.isascii()
    # Text's redundancy: a compressor leaves between a fifth and a half of it.
    assert 0.2 < len(gzip.compress(text)) / len(text) < 0.5
    src = tmp_path / "p.c"
    src.write_bytes(inputs.c_program(20, seed=1))
    # The host's compiler takes it without headers, warnings as errors; it has no undefined
    # behaviour (the sanitizer stops at the first), so every correct compilation of it
    # prints the same checksum.
    outputs = set()
    for flags in (["-O0"], ["-O2", "-fsanitize=undefined", "-fno-sanitize-recover"]):
        subprocess.run(["gcc", *flags, "-Wall", "-Werror", "-Wno-unused-function",
                        "-Wno-builtin-declaration-mismatch", str(src), "-o",
                        str(tmp_path / "p")], check=True)
        outputs.add(subprocess.run([tmp_path / "p"], capture_output=True, text=True,
                                   check=True).stdout)
    assert len(outputs) == 1 and next(iter(outputs)).startswith("checksum="), outputs
    header = inputs.ppm(33, 7, seed=1)
    assert header.startswith(b"P6\n33 7\n255\n") and len(header) == 12 + 33 * 7 * 3
    wav = inputs.wav(0.5, 8000, seed=1)
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and len(wav) == 44 + 8000


def test_bad_input_definitions_are_one_line_errors():
    with pytest.raises(UserError, match="unknown input generator 'txt'"):
        inputs.validate({"generator": "txt"}, "here")
    with pytest.raises(UserError, match="missing seed"):
        inputs.validate({"generator": "text", "bytes": 3}, "here")
    with pytest.raises(UserError, match="unknown colour"):
        inputs.validate({"generator": "ppm", "width": 1, "height": 1, "seed": 1,
                         "colour": 2}, "here")


# ---------------------------------------------------------------- workload.toml and lock
def _real_workload(tmp_path: Path, size: str) -> Path:
    d = tmp_path / "real"
    d.mkdir()
    (d / "workload.toml").write_text(
        'summary = "x"\nstudies = [1]\n[program]\npackages = ["gzip"]\npath = "/bin/gzip"\n'
        + size)
    return d


def test_a_real_programs_size_names_only_its_inputs(tmp_path):
    ok = _real_workload(tmp_path, '[sizes.smoke]\nargs = ["-c"]\nstdin = "{t}"\n'
                                  'stdout = "o.gz"\n'
                                  'inputs = { t = { generator = "text", bytes = 9, seed = 1 } }\n')
    w = workloads._load_one(ok)
    assert w.is_real_program and w.command("smoke") == (
        ["/schedlab/pkg/real/gzip", "-c"], "/schedlab/inputs/real/smoke/t", "o.gz")
    shutil.rmtree(ok)
    bad = _real_workload(tmp_path, '[sizes.smoke]\nargs = ["{text}"]\n')
    with pytest.raises(UserError, match=r"'\{text\}' names no input"):
        workloads._load_one(bad)
    shutil.rmtree(bad)
    bad = _real_workload(tmp_path, '[sizes.smoke]\nargs = []\nstdout = "../x"\n')
    with pytest.raises(UserError, match="stdout is a file name"):
        workloads._load_one(bad)


def test_inputs_every_size_reads_are_defined_once(tmp_path):
    d = _real_workload(tmp_path, '[inputs]\njob = { generator = "literal", text = "x" }\n'
                                 '[sizes.smoke]\nargs = ["{job}"]\n'
                                 '[sizes.paper]\nargs = ["-9", "{job}"]\n'
                                 'inputs = { job = { generator = "literal", text = "y" } }\n')
    w = workloads._load_one(d)
    assert w.command("smoke")[0][-1] == "/schedlab/inputs/real/smoke/job"
    assert w.inputs("smoke") == {"job": {"generator": "literal", "text": "x"}}
    assert w.inputs("paper") == {"job": {"generator": "literal", "text": "y"}}  # its own
    shutil.rmtree(d)
    bad = _real_workload(tmp_path, '[inputs]\njob = { generator = "nope" }\n'
                                   '[sizes.smoke]\nargs = ["{job}"]\n')
    with pytest.raises(UserError, match=r"\[inputs.job\]: unknown input generator"):
        workloads._load_one(bad)


@pytest.mark.parametrize("table, message", [
    ('args = ["x"]', "needs makes"),
    ('makes = "var/x"', "needs makes"),
    ('makes = "/var/x"\nargs = ["-l", "/usr/share/x"]', "never absolute"),
    ('makes = "/var/x"\nwhen = "now"', "a table of makes, args and stdin"),
])
def test_an_install_step_is_checked_when_read(tmp_path, table, message):
    d = _real_workload(tmp_path, f'[program.install]\n{table}\n[sizes.smoke]\nargs = []\n')
    with pytest.raises(UserError, match=message):
        workloads._load_one(d)


@needs_apt
def test_a_file_an_installation_makes_is_the_same_wherever_it_is_made(tmp_path, monkeypatch):
    """GAP's workspace, made in two caches at different paths (the packages shared, not
    their unpacking): the same bytes, so its hash names it on any host."""
    from schedlab.paths import cache_dir
    from schedlab.store import hash_file

    w = workloads.get("debian-gap")
    made = []
    for where in ("a", "elsewhere/b"):
        cache = tmp_path / where
        cache.mkdir(parents=True)
        (cache / "debs").symlink_to(cache_dir() / "debs")   # no second download
        monkeypatch.setenv("SCHEDLAB_CACHE", str(cache))
        files = packages.program_files(w.name, w.dir, w.program, progress=lambda s: None)
        made.append(files.files["/var/lib/gap/workspace"])
    assert made[0].is_relative_to(tmp_path / "a") and made[1].is_relative_to(tmp_path / "elsewhere")
    assert made[0].stat().st_size > 10_000_000
    assert hash_file(made[0]) == hash_file(made[1])


def test_a_missing_or_damaged_lock_names_the_command_that_makes_it(tmp_path):
    d = tmp_path / "prog"
    d.mkdir()
    with pytest.raises(UserError, match="run.py workloads prog --lock"):
        packages.read_lock(d)
    (d / packages.LOCK_NAME).write_text("[[package]]\nname = 'x'\n")
    with pytest.raises(UserError, match="is damaged"):
        packages.read_lock(d)


@needs_apt
def test_a_version_debian_no_longer_serves_is_an_error_not_a_substitute(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    gone = packages.Deb("gzip", "0.1-1", "gzip_0.1-1_amd64.deb", "0" * 64, 1)
    with pytest.raises(UserError, match=r"does not serve gzip=0.1-1.*--lock"):
        packages.fetch(gone, progress=lambda s: None)
    assert not list((tmp_path / "cache" / "debs").glob("*/*.deb"))


@needs_apt
@pytest.mark.parametrize("name", REAL)
def test_a_real_program_brings_its_locked_libraries_not_the_hosts(name):
    w = workloads.get(name)
    locked = packages.read_lock(w.dir)
    files = packages.program_files(name, w.dir, w.program, progress=lambda s: None)
    assert files.executable == f"/schedlab/pkg/{name}/{w.program.guest_name}"
    # The loader and glibc are the locked libc6's, whatever the host has.
    libc6 = packages.unpack(next(d for d in locked if d.name == "libc6"))
    libc = files.files["/lib/x86_64-linux-gnu/libc.so.6"]
    assert libc.is_relative_to(libc6)
    assert files.files["/lib64/ld-linux-x86-64.so.2"].is_relative_to(libc6)
    # Every library it needs is there (the oracle: the host's readelf on the same files).
    for guest, host in files.files.items():
        dynamic = subprocess.run(["readelf", "-d", str(host)], capture_output=True,
                                 text=True).stdout
        for line in dynamic.splitlines():
            if "(NEEDED)" in line:
                soname = line.split("[")[1].rstrip("]")
                assert any(g.endswith("/" + soname) for g in files.files), (guest, soname)


@needs_apt
def test_a_programs_files_are_found_once_a_process():
    """A campaign resolves each of its runs: the files of a program are looked up once."""
    w = workloads.get("debian-gzip")
    first = packages.program_files(w.name, w.dir, w.program, progress=lambda s: None)
    assert packages.program_files(w.name, w.dir, w.program, progress=lambda s: None) is first


def test_every_real_program_is_characterised_from_its_current_lock_and_inputs():
    from schedlab.guest import characterise

    chars, made_from = characterise.load_characterisation(with_sources=True)
    for name in REAL:
        assert name in chars and made_from[name] == workloads.get(name).content_hash(), \
            f"run 'python3 run.py workloads {name} --characterise'"


@needs_apt
def test_a_staged_program_runs_on_the_host_with_its_own_glibc(tmp_path):
    """What characterisation runs under cachegrind: the locked program through its locked
    loader, its arguments' guest paths made staged paths."""
    w = workloads.get("debian-gzip")
    files = packages.program_files(w.name, w.dir, w.program, progress=lambda s: None)
    text = tmp_path / "input.txt"
    text.write_bytes(b"staged " * 1000)
    guest_input = "/schedlab/inputs/x"
    files = packages.ProgramFiles(files.executable, {**files.files, guest_input: text})
    argv = packages.host_argv(files, tmp_path / "root", [files.executable, "-c", guest_input])
    assert argv[0].endswith("ld-linux-x86-64.so.2") and argv[-1].endswith("schedlab/inputs/x")
    out = subprocess.run(argv, capture_output=True, check=True).stdout
    assert gzip.decompress(out) == text.read_bytes()


def test_a_real_program_enters_the_run_id_by_its_lock_and_inputs(tmp_path, monkeypatch):
    request = RunRequest(machine="clovertown-e5320-mup",
                         jobs=(WorkloadRequest("debian-gzip"),))
    spec = prepare(request, build=False).spec
    identity = spec["real_programs"]["debian-gzip"]
    w = workloads.get("debian-gzip")
    assert identity["packages"] == packages.lock_identity(packages.read_lock(w.dir))
    assert identity["inputs"] == {"smoke/text": inputs.identity(w.inputs("smoke")["text"])}
    assert "install" not in identity      # only a program that has an installation step
    gap = prepare(RunRequest(machine="clovertown-e5320-mup",
                             jobs=(WorkloadRequest("debian-gap"),)), build=False).spec
    assert gap["real_programs"]["debian-gap"]["install"] == \
        workloads.get("debian-gap").program.install.identity()
    # Runs without real programs record nothing of them (their ids are unchanged).
    plain = prepare(RunRequest(machine="clovertown-e5320-mup",
                               jobs=(WorkloadRequest("gzip"),)), build=False).spec
    assert "real_programs" not in plain


# ---------------------------------------------------------------- on QEMU, with oracles
def _text_input(w, size="smoke") -> bytes:
    return inputs.make(w.inputs(size)["text"], "test").read_bytes()


def _same(got: bytes, want: bytes) -> None:
    assert got == want, f"{len(got)} bytes, expected {len(want)}"


def _jpeg_close_to_input(w, out: Path) -> None:
    """Pillow's decoder (its own libjpeg, not the guest's) gives the input image back within
    a quality-75 JPEG's error: PSNR above 30 dB."""
    from PIL import Image
    import numpy as np

    source = inputs.make(w.inputs("smoke")["image"], "test")
    original = np.asarray(Image.open(source).convert("RGB"), dtype=float)
    decoded = np.asarray(Image.open(out / "image.jpg").convert("RGB"), dtype=float)
    assert decoded.shape == original.shape
    mse = ((decoded - original) ** 2).mean()
    assert 10 * np.log10(255 ** 2 / mse) > 30


def _assembly_computes_what_the_source_says(w, out: Path) -> None:
    """The guest's -O2 assembly, assembled and linked by the host, prints the checksum the
    same source prints when the host compiles it at -O0."""
    source = inputs.make(w.inputs("smoke")["source"], "test")
    work = out.parent / "check"
    work.mkdir(exist_ok=True)
    runs = []
    for name, what in (("guest", out / "program.s"), ("host", source)):
        subprocess.run(["gcc", "-O0", "-w", "-x", "assembler" if name == "guest" else "c",
                        str(what), "-o", str(work / name)], check=True)
        runs.append(subprocess.run([work / name], capture_output=True, text=True,
                                   check=True).stdout)
    assert runs[0] == runs[1] and runs[0].startswith("checksum="), runs


def _words_are_the_clips_names(w, out: Path) -> None:
    """Each clip of alsa-utils is a voice saying its file's name (Front_Center.wav: "front
    center"): the recogniser's words for each utterance are its name."""
    heard = {}
    for line in (out / "words.txt").read_text().splitlines():
        words, _, rest = line.rpartition(" (")
        heard[rest.split()[0]] = words
    names = inputs.make(w.inputs("smoke")["utterances"], "test").read_text().split()
    assert heard == {n: n.replace("_", " ").lower() for n in names}, heard


def _render_matches_the_hosts(w, out: Path) -> None:
    """The guest's render against the same locked povray rendering the same scene on the
    host (the known answer; glibc's libm may take other instruction paths on the host's
    CPU, so pixels may differ by a level or two, not more), and what the scene must show: a
    blue sky at the top, a floor and objects below (no uniform image)."""
    from PIL import Image
    import numpy as np

    files = packages.program_files(w.name, w.dir, w.program, progress=lambda s: None)
    scene_guest = w.input_guest_path("smoke", "scene")
    scene = inputs.make(w.inputs("smoke")["scene"], "test")
    files = packages.ProgramFiles(files.executable, {**files.files, scene_guest: scene})
    argv, _, _ = w.command("smoke")
    # Not below the run's directory: its name joins job names with '+', which povray's
    # command line takes for a switch.
    with tempfile.TemporaryDirectory(prefix="povray-") as host_dir:
        subprocess.run(packages.host_argv(files, Path(host_dir) / "root", argv), cwd=host_dir,
                       capture_output=True, check=True)
        host = np.asarray(Image.open(Path(host_dir) / "image.ppm").convert("RGB"), dtype=int)
    guest = np.asarray(Image.open(out / "image.ppm").convert("RGB"), dtype=int)
    assert guest.shape == host.shape == (60, 80, 3)
    assert np.abs(guest - host).max() <= 2
    top = guest[0].mean(axis=0)
    assert top[2] > top[0] and guest.std() > 20


ORACLE_TOOLS = Path(__file__).parent / "data" / "oracles"


def _decode(tool: str, debs: tuple[str, ...], program: str, options: list[str],
            encoded: Path, decoded_name: str) -> bytes:
    """An oracle tool of tests/data/oracles/, staged from its lock, run as
    ``program OPTIONS DECODED ENCODED``: what it decoded (the run's directory untouched)."""
    spec = packages.ProgramSpec(debs, program)
    files = packages.program_files(tool, ORACLE_TOOLS / tool, spec, progress=lambda s: None)
    with tempfile.TemporaryDirectory(prefix=f"{tool}-") as tmp:
        decoded = Path(tmp) / decoded_name
        argv = packages.host_argv(files, Path(tmp) / "root",
                                  [files.executable, *options, str(decoded), str(encoded)])
        subprocess.run(argv, capture_output=True, check=True)
        return decoded.read_bytes()


def _hevc_decodes_to_the_video(w, out: Path) -> None:
    """libde265's decoder (not x265's code), staged from its own lock, decodes the guest's
    stream to as many frames as the input has, each within 30 dB PSNR of its source."""
    import numpy as np

    d = w.inputs("smoke")["video"]
    width, height, frames = d["width"], d["height"], d["frames"]
    decoded = np.frombuffer(_decode("dec265", ("libde265-examples",),
                                    "/usr/bin/libde265-dec265", ["-q", "-o"],
                                    out / "video.hevc", "decoded.yuv"), dtype=np.uint8)
    frame = width * height * 3 // 2
    assert decoded.size == frames * frame, decoded.size
    source = inputs.make(d, "test").read_bytes()
    header = source.index(b"\n") + 1
    for i in range(frames):
        start = header + i * (len(b"FRAME\n") + frame) + len(b"FRAME\n")
        want = np.frombuffer(source[start:start + width * height], dtype=np.uint8)
        got = decoded[i * frame:i * frame + width * height]
        mse = ((got.astype(float) - want) ** 2).mean()
        assert 10 * np.log10(255 ** 2 / max(mse, 1e-9)) > 30, (i, mse)


def _every_sentence_is_parsed_whole(w, out: Path) -> None:
    """One linkage per sentence that uses every word (UNUSED=0), and the words of its
    constituent tree, tags stripped, are the sentence's words in order."""
    import re

    text = inputs.make(w.inputs("smoke")["text"], "test").read_text()
    sentences = [re.findall(r"[a-z]+", line.lower()) for line in text.splitlines()]
    parses = (out / "parses.txt").read_text().split("Found ")[1:]
    assert len(parses) == len(sentences)
    for sentence, parse in zip(sentences, parses):
        assert "UNUSED=0" in parse, parse
        start = parse.index("\n(S") + 1
        depth, end = 0, start
        for end, ch in enumerate(parse[start:], start):   # to the tree's closing bracket
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
        tokens = re.findall(r"[^\s()]+", parse[start:end + 1])
        words = [t.split(".")[0].lower() for t in tokens
                 if not t.isupper() and t != "." and "." in t or t.islower()]
        assert [x for x in words if x] == sentence, (words, sentence)


def _mp3_decodes_to_the_recording(w, out: Path) -> None:
    """mpg123 (its own decoder, not LAME's), staged from its lock, decodes the guest's MP3
    to as many samples as the recording (gapless: LAME's delay and padding removed), within
    15 dB SNR of it (128 kbit/s keeps what is audible, not every sample)."""
    import wave

    import numpy as np

    decoded_wav = _decode("mpg123", ("mpg123",), "/usr/bin/mpg123.bin", ["-q", "-w"],
                          out / "recording.mp3", "decoded.wav")
    with wave.open(io.BytesIO(decoded_wav)) as decoded:
        got = np.frombuffer(decoded.readframes(decoded.getnframes()), dtype="<i2")
    with wave.open(str(inputs.make(w.inputs("smoke")["recording"], "test"))) as source:
        want = np.frombuffer(source.readframes(source.getnframes()), dtype="<i2")
    assert got.size == want.size, (got.size, want.size)
    noise = ((got.astype(float) - want) ** 2).mean()
    assert 10 * np.log10((want.astype(float) ** 2).mean() / noise) > 15


def _digest_of_input(w, out: Path) -> None:
    import hashlib
    text = _text_input(w)
    line = (out / "digest.txt").read_text()
    assert line.split()[0] == hashlib.sha1(text).hexdigest(), line


def _partitions(k: int) -> int:
    """p(k) by counting partitions into parts of at most each size (not GAP's method)."""
    ways = [1] + [0] * k
    for part in range(1, k + 1):
        for total in range(part, k + 1):
            ways[total] += ways[total - part]
    return ways[k]


def _orders_are_the_closed_forms(w, out: Path) -> None:
    """GAP's results for the job's parameters against closed forms and published values:
    n! for S_n, p(p^2 - 1) for PGL(2, p), (q^2 - 1)(q^2 - q) for GL(2, q), the order of
    Rubik's cube group (43,252,003,274,489,856,000), the conjugacy classes of subgroups of
    S_4 and S_5 (11 and 19, OEIS A000638) and the partition numbers counted here."""
    import math
    import re

    job = json.loads((out.parents[2] / "results.json").read_text())["jobs"][0]
    params = {k: int(v) for k, v in re.findall(r"(\w+) := (\d+)", w.args("smoke")[-2])}
    n, p, q = params["n"], params["p"], params["q"]
    assert {k: job["metrics"][k] for k in ("cube_order", "symmetric_order", "pgl_order",
                                            "gl_order", "subgroup_classes", "partitions",
                                            "rounds")} == {
        "cube_order": 43_252_003_274_489_856_000, "symmetric_order": math.factorial(n),
        "pgl_order": p * (p * p - 1), "gl_order": (q * q - 1) * (q * q - q),
        "subgroup_classes": {4: 11, 5: 19}[params["m"]],
        "partitions": _partitions(params["k"]), "rounds": params["rounds"]}


# workload -> check(its workload entry, its artefacts directory): raises if the output is
# wrong. Independent of the program: Python's own decompressors, the host's tools.
ORACLES = {
    "debian-gzip": lambda w, out: _same(gzip.decompress((out / "text.gz").read_bytes()),
                                        _text_input(w)),
    "debian-bzip2": lambda w, out: _same(bz2.decompress((out / "text.bz2").read_bytes()),
                                         _text_input(w)),
    "debian-cc1": _assembly_computes_what_the_source_says,
    "debian-cjpeg": _jpeg_close_to_input,
    "debian-gap": _orders_are_the_closed_forms,
    "debian-pocketsphinx": _words_are_the_clips_names,
    "debian-lame": _mp3_decodes_to_the_recording,
    "debian-link-parser": _every_sentence_is_parsed_whole,
    "debian-povray": _render_matches_the_hosts,
    "debian-x265": _hevc_decodes_to_the_video,
    "debian-sha1sum": _digest_of_input,
}


def test_every_real_program_has_an_oracle():
    assert set(REAL) <= set(ORACLES), set(REAL) - set(ORACLES)


@needs_apt
@pytest.mark.parametrize("name", REAL)
def test_a_real_program_runs_on_qemu_and_its_output_is_right(name, results_dir):
    """At smoke size, one run per program, as the studies carry them (a run with all of
    them would need 140 MB of guest memory twice: the archive and what it unpacks to)."""
    request = RunRequest(machine="clovertown-e5320-mup", jobs=(WorkloadRequest(name),))
    out = execute(prepare(request, progress=print), progress=print)
    res = json.loads((out / "results.json").read_text())
    assert res["ok"], res["errors"]
    ORACLES[name](workloads.get(name), out / "artifacts" / name / "1")


def test_a_real_programs_region_begins_after_its_start_up():
    """The warm-up rule (schedlab.campaigns.programs): a study's own warm-up, or 1.5 x the
    program's measured start-up instructions at one per cycle of the machine's clock."""
    from schedlab.campaigns import programs
    from schedlab.guest import characterise
    from schedlab.machine import load_machine

    startup = characterise.startup_instructions("debian-link-parser")
    assert startup and startup > 100_000_000      # its dictionary: hundreds of millions
    clock = load_machine("clovertown-e5320").clock_hz
    assert programs.warmup_s("parser", "clovertown-e5320", 0.02) == round(
        1.5 * startup / clock, 3) > 0.02
    # Sharing its CPU (study 1's experiment A: half of it), its start-up takes twice as long.
    assert programs.warmup_s("parser", "clovertown-e5320", 0.02, cpu_share=0.5) == round(
        1.5 * startup / (clock * 0.5), 3)
    from schedlab.campaigns.experiment import registry
    fig2 = next(r for r in registry()["kazempour-fig2"].requests("smoke", "gem5")
                if r.label["benchmark"] == "parser")
    assert fig2.jobs[0].warmup == programs.warmup_s("parser", fig2.machine, 0.02, 0.5)
    assert programs.warmup_s("gzip", "clovertown-e5320", 0.02) == 0.02   # starts at once
    assert programs.warmup_s("art", "clovertown-e5320", 0.02) == 0.02    # a stand-in
    # POV-Ray waits on timers as it starts: its declared start-up, not its instructions.
    assert programs.warmup_s("povray", "clovertown-x5365", 0.12) == \
        workloads.get("debian-povray").program.startup_s == 0.6
    for benchmark, workload in programs.REAL_PROGRAMS.items():
        assert workloads.get(workload).is_real_program
        assert characterise.startup_instructions(workload), workload
    assert programs.program("gap") == "debian-gap"
    assert programs.program("art") == "art"


def test_a_runs_region_follows_the_start_up_of_every_program_in_it():
    """Of every study's run at smoke scale on gem5, each real program, the measured one or
    one beside it, has started before the region: the run's warm-up is at least its
    declared start-up and its start-up instructions at one per cycle with the whole CPU."""
    from schedlab.campaigns.experiment import registry
    from schedlab.campaigns.programs import STARTUP_MARGIN
    from schedlab.guest import characterise
    from schedlab.machine import load_machine

    checked = set()
    for experiment in registry().values():
        if not experiment.implemented or experiment.study == "demo":
            continue
        for request in experiment.requests("smoke", "gem5"):
            warmup = max(j.warmup for j in request.jobs)
            clock = load_machine(request.machine).clock_hz
            for job in (*request.jobs, *request.background):
                w = workloads.get(job.workload)
                if not w.is_real_program:
                    continue
                startup = characterise.startup_instructions(w.name) or 0
                needed = max(w.program.startup_s, round(STARTUP_MARGIN * startup / clock, 3))
                assert warmup >= needed, (experiment.name, request.label, w.name, warmup)
                checked.add((experiment.name, w.name))
    # Among them the interfering programs of study 1's figures 4 and 5 (GAP, link-parser).
    assert {("kazempour-fig4", "debian-gap"), ("kazempour-fig5", "debian-link-parser"),
            ("lee-fig24", "debian-pocketsphinx")} <= checked


def test_the_readmes_comparison_table_is_the_commands():
    from schedlab.campaigns.programs import comparison_table

    readme = (Path(__file__).parents[1] / "workloads" / "README.md").read_text()
    block = readme.split("<!-- real-programs-table -->\n")[1].split(
        "\n<!-- /real-programs-table -->")[0]
    assert block == comparison_table(), "run 'python3 run.py workloads --real' and paste it"


def test_a_figure_says_which_benchmarks_ran_as_real_programs():
    import pandas as pd

    from schedlab.analysis.figures import programs_note

    frame = pd.DataFrame({"benchmark": ["gcc", "art", "gcc"],
                          "job": ["debian-cc1", "art", "debian-cc1"]})
    assert programs_note(frame) == "real programs from Debian: gcc (cc1); our stand-ins: art"
    assert programs_note(frame.drop(columns="job")) == ""    # the runs do not say
