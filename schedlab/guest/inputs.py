"""Inputs of the real programs (workloads from Debian packages), made by the project.

A workload.toml names each input of a size as a generator and its parameters
(``inputs = { text = { generator = "text", bytes = 2000000, seed = 164 } }``); the file is
made here, deterministically, and cached by the hash of that definition and of this
module's source, which is also what enters the run id (:func:`identity`): an edit of a
generator renames the runs that use it, so no run id ever names two different inputs.

The generators use their own PRNG (splitmix64, below), not Python's ``random`` nor numpy's,
whose streams are not promised to stay the same across versions. Each makes the kind of
input the benchmark it stands for reads (SPEC's gzip and bzip2 compress text and program
source; gcc compiles preprocessed C; MiBench's jpeg encodes a photograph-like PPM, its lame
and gsm a PCM recording), sized by its parameters.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Callable

from schedlab.errors import UserError
from schedlab.paths import cache_dir
from schedlab.store import hash_bytes, hash_file, hash_json, write_atomic

_MASK = (1 << 64) - 1
# This module: its source is part of every input's identity (an edit of a generator renames
# the runs that use it).
SOURCE = Path(__file__)


class SplitMix64:
    """Steele, Lea and Flood's splitmix64: a fixed, documented stream for a given seed."""

    def __init__(self, seed: int):
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A number in [0, n) (the modulo bias is below 2**-40 for the n used here)."""
        return self.next() % n

    def unit(self) -> float:
        return (self.next() >> 11) * (1.0 / (1 << 53))

    def block(self, n: int):
        """The next n outputs at once (numpy's uint64 arithmetic wraps modulo 2**64 as the
        sequential stream does): the same numbers as n calls of :meth:`next`."""
        import numpy as np

        steps = np.arange(1, n + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = np.uint64(self.state) + steps * np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        self.state = (self.state + n * 0x9E3779B97F4A7C15) & _MASK
        return z ^ (z >> np.uint64(31))


# ---------------------------------------------------------------- text (gzip, bzip2)
_SYLLABLES = ["ka", "to", "ri", "me", "an", "sel", "dor", "vi", "nu", "pe", "ing", "ter",
              "os", "la", "com", "pro", "ex", "tion", "al", "re", "de", "ble", "ment", "ur"]


def text(bytes: int, seed: int, vocabulary: int = 5000) -> bytes:
    """English-like prose: words of a fixed vocabulary drawn with Zipf's law (rank r with
    weight 1/r, as word frequencies in English), in sentences and paragraphs. Its
    redundancy is of text's kind: gzip -6 leaves about a third of it."""
    rng = SplitMix64(seed)
    words = []
    for _ in range(vocabulary):
        words.append("".join(_SYLLABLES[rng.below(len(_SYLLABLES))]
                             for _ in range(1 + rng.below(3))))
    # Inverse of the Zipf CDF by a cumulative table.
    cumulative, total = [], 0.0
    for rank in range(1, vocabulary + 1):
        total += 1.0 / rank
        cumulative.append(total)
    out: list[str] = []
    size = 0
    sentence_left = 0
    while size < bytes:
        if sentence_left == 0:
            sentence_left = 6 + rng.below(18)
            word = _pick(words, cumulative, rng).capitalize()
        else:
            word = _pick(words, cumulative, rng)
        sentence_left -= 1
        tail = ". " if sentence_left == 0 else " "
        if sentence_left == 0 and rng.below(6) == 0:
            tail = ".\n\n"
        out.append(word + tail)
        size += len(word) + len(tail)
    return "".join(out).encode()[:bytes]


def _pick(words: list[str], cumulative: list[float], rng: SplitMix64) -> str:
    import bisect
    return words[bisect.bisect_left(cumulative, rng.unit() * cumulative[-1])]


# ---------------------------------------------------------------- C source (gcc's cc1)
def c_program(functions: int, seed: int) -> bytes:
    """A self-contained C translation unit (no #include: cc1 needs no headers): integer
    and floating-point functions with loops, branches, switches, arrays and structs,
    calling one another, and a main that prints their combined result (``checksum=...``:
    a compiled program can be checked against another compilation). 176.gcc compiles
    preprocessed C files of a real program; this is C of the same constructs, sized by
    ``functions``."""
    rng = SplitMix64(seed)
    lines = ["int printf(const char *, ...);", "typedef unsigned long u64;",
             "struct node { u64 key; double weight; struct node *next; int tag[4]; };",
             "static u64 table[256];", "static double field[64][64];", ""]
    for f in range(functions):
        lines += _c_function(f, rng)
    lines.append("int main(int argc, char **argv)\n{\n\tu64 acc = (u64)argc;\n"
                 "\t(void)argv;")
    for f in range(functions):
        lines.append(f"\tacc ^= f{f}(acc + {f}, (int)(acc & 7));")
    lines += ['\tprintf("checksum=%lu\\n", acc);', "\treturn 0;", "}", ""]
    return "\n".join(lines).encode()


def _c_expr(rng: SplitMix64, vars_: list[str], depth: int = 0) -> str:
    if depth > 2 or rng.below(3) == 0:
        choice = rng.below(3)
        if choice == 0:
            return f"{rng.below(1000)}ul"
        if choice == 1:
            return f"table[({vars_[rng.below(len(vars_))]}) & 255]"
        return vars_[rng.below(len(vars_))]
    op = ["+", "-", "*", "^", "|", "&", "<<", ">>"][rng.below(8)]
    left, right = _c_expr(rng, vars_, depth + 1), _c_expr(rng, vars_, depth + 1)
    if op in ("<<", ">>"):
        right = f"({right} & 15)"
    return f"({left} {op} {right})"


def _c_function(f: int, rng: SplitMix64) -> list[str]:
    # The int parameters enter expressions as u64: unsigned arithmetic wraps, signed
    # overflow would be undefined (and the check compiles the file twice).
    vars_ = ["a", "(u64)b", "(u64)i", "s"]
    body = [f"static u64 f{f}(u64 a, int b)", "{", "\tu64 s = a * 2654435761u;",
            "\tint i = 0;", "\tstruct node n = { a, 0.5, 0, { b, 1, 2, 3 } };", ""]
    for _ in range(2 + rng.below(4)):
        kind = rng.below(4)
        if kind == 0:
            body += [f"\tfor (i = 0; i < {4 + rng.below(60)}; i++) {{",
                     f"\t\ts += {_c_expr(rng, vars_)};",
                     f"\t\ttable[i & 255] ^= s >> {rng.below(32)};", "\t}"]
        elif kind == 1:
            body += [f"\tif ({_c_expr(rng, vars_)} > {rng.below(5000)}u)",
                     f"\t\ts -= {_c_expr(rng, vars_)};", "\telse",
                     f"\t\ts += {_c_expr(rng, vars_)};"]
        elif kind == 2:
            body.append("\tswitch (b & 7) {")
            for case in range(1 + rng.below(7)):
                body.append(f"\tcase {case}: s ^= {_c_expr(rng, vars_)}; break;")
            body += ["\tdefault: s += n.tag[b & 3]; break;", "\t}"]
        else:
            body += [f"\tfor (i = 0; i < {8 + rng.below(56)}; i++)",
                     f"\t\tfield[i & 63][(i * {1 + rng.below(7)}) & 63] += "
                     f"n.weight * (double)(s & {rng.below(255) + 1});",
                     "\tn.weight += field[b & 63][a & 63];"]
    if f > 0:
        body.append(f"\ts ^= f{rng.below(f)}(s, b + 1) & 0xffff;" if rng.below(2) == 0
                    # A comparison, not a conversion: a double out of u64's range is
                    # undefined behaviour, and the check compiles the file twice.
                    else "\ts ^= (u64)(n.weight > 1e6);")
    body += ["\treturn s ^ n.key;", "}", ""]
    return body


# ---------------------------------------------------------------- image (MiBench jpeg)
def ppm(width: int, height: int, seed: int) -> bytes:
    """A photograph-like binary PPM: smooth gradients, overlapping discs of colour and
    a little noise (JPEG's DCT sees low frequencies with edges, as in a photograph).
    Integer arithmetic throughout (numpy's is exact), so the bytes depend on nothing else."""
    import numpy as np

    rng = SplitMix64(seed)
    discs = [(rng.below(width), rng.below(height), 8 + rng.below(max(9, width // 3)),
              (rng.below(256), rng.below(256), rng.below(256))) for _ in range(12)]
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    image = np.stack([(x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1),
                      np.full_like(x, 128)], axis=-1)
    for cx, cy, radius, colour in discs:
        inside = (x - cx) ** 2 + (y - cy) ** 2 < radius * radius
        image[inside] = (image[inside] + np.array(colour)) >> 1
    noise = (rng.block(width * height) % np.uint64(9)).astype(np.int64) - 4
    image += noise.reshape(height, width)[..., None]
    pixels = np.clip(image, 0, 255).astype(np.uint8).tobytes()
    return f"P6\n{width} {height}\n255\n".encode() + pixels


# ---------------------------------------------------------------- sound (lame, gsm)
def wav(seconds: float, rate: int, seed: int, channels: int = 1) -> bytes:
    """A 16-bit PCM WAV of notes: sums of a few harmonics with attack/decay envelopes and
    a little noise, a new note every quarter second (music-like, as MiBench's lame and
    gsm inputs are recordings)."""
    rng = SplitMix64(seed)
    frames = int(seconds * rate)
    samples = bytearray()
    note_len = rate // 4
    freq = 220.0
    for i in range(frames):
        t_note = i % note_len
        if t_note == 0:
            freq = 110.0 * 2 ** (rng.below(36) / 12)
        env = min(1.0, t_note / (0.01 * rate)) * math.exp(-3.0 * t_note / note_len)
        phase = 2 * math.pi * freq * i / rate
        value = env * (0.6 * math.sin(phase) + 0.25 * math.sin(2 * phase)
                       + 0.1 * math.sin(3 * phase)) + 0.02 * (rng.unit() - 0.5)
        sample = max(-32768, min(32767, int(value * 20000)))
        samples += struct.pack("<h", sample) * channels
    data = bytes(samples)
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels,
                                    2 * channels, 16)
    return header + b"data" + struct.pack("<I", len(data)) + data


# ---------------------------------------------------------------- video (x265)
def y4m(width: int, height: int, frames: int, seed: int) -> bytes:
    """A YUV4MPEG2 4:2:0 video of discs moving over a textured gradient, each at its own
    velocity (motion an encoder's search finds, as in the sequences 464.h264ref encodes),
    with a little noise. Integer arithmetic throughout."""
    import numpy as np

    rng = SplitMix64(seed)
    discs = [(rng.below(width), rng.below(height), 6 + rng.below(max(7, width // 6)),
              rng.below(9) - 4, rng.below(9) - 4, rng.below(256), rng.below(256),
              rng.below(256)) for _ in range(8)]
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    cy, cx = np.mgrid[0:height // 2, 0:width // 2].astype(np.int64)
    background = 40 + (x * 140) // max(1, width) + ((x // 8 + y // 8) % 2) * 20
    out = [f"YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg\n".encode()]
    for t in range(frames):
        luma = background.copy()
        u = np.full((height // 2, width // 2), 128, dtype=np.int64)
        v = u.copy()
        for x0, y0, r, dx, dy, yy, uu, vv in discs:
            px, py = (x0 + dx * t) % width, (y0 + dy * t) % height
            luma[(x - px) ** 2 + (y - py) ** 2 < r * r] = yy
            inside = (2 * cx - px) ** 2 + (2 * cy - py) ** 2 < r * r
            u[inside], v[inside] = uu, vv
        noise = (rng.block(width * height) % np.uint64(5)).astype(np.int64) - 2
        luma = np.clip(luma + noise.reshape(height, width), 0, 255)
        out += [b"FRAME\n", luma.astype(np.uint8).tobytes(), u.astype(np.uint8).tobytes(),
                v.astype(np.uint8).tobytes()]
    return b"".join(out)


# ---------------------------------------------------------------- sentences (link-grammar)
_WORDS = {
    "det": ["the", "a", "every", "this", "that", "my", "her"],
    "adj": ["big", "small", "old", "young", "red", "happy", "quiet", "strange", "clever"],
    "noun": ["dog", "cat", "man", "woman", "teacher", "student", "car", "house", "garden",
             "book", "river", "city", "child", "doctor"],
    "verb": ["saw", "liked", "found", "watched", "followed", "bought", "visited", "chased"],
    "intransitive": ["slept", "arrived", "laughed", "waited", "smiled"],
    "prep": ["in", "near", "under", "behind", "with", "after"],
    "adverb": ["quickly", "slowly", "yesterday", "often", "quietly"],
    "conj": ["and", "but", "because"],
}


def sentences(count: int, seed: int) -> bytes:
    """English sentences of a small phrase grammar (noun phrases with adjectives and
    prepositional phrases, transitive and intransitive clauses, conjunctions), one per
    line: what 197.parser's link-grammar parser reads."""
    rng = SplitMix64(seed)

    def pick(kind: str) -> str:
        words = _WORDS[kind]
        return words[rng.below(len(words))]

    def noun_phrase(depth: int = 0) -> list[str]:
        words = [pick("det")] + ([pick("adj")] if rng.below(2) else []) + [pick("noun")]
        if depth < 1 and rng.below(4) == 0:
            words += [pick("prep")] + noun_phrase(depth + 1)
        return words

    def clause() -> list[str]:
        if rng.below(5) < 3:
            words = noun_phrase() + [pick("verb")] + noun_phrase()
        else:
            words = noun_phrase() + [pick("intransitive")]
        if rng.below(10) < 3:
            words.append(pick("adverb"))
        return words

    lines = []
    for _ in range(count):
        words = clause()
        if rng.below(10) < 3:
            words += [pick("conj")] + clause()
        lines.append(" ".join(words).capitalize() + ".")
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- scene (povray)
def pov_scene(objects: int, seed: int) -> bytes:
    """A POV-Ray 3.7 scene without #include: a checkered reflective floor under a sky,
    two lights and ``objects`` spheres, boxes, cylinders and tori of random colours and
    finishes (453.povray renders one scene of such primitives, with reflection)."""
    rng = SplitMix64(seed)

    def num(lo: float, hi: float) -> str:
        return f"{lo + (hi - lo) * rng.unit():.3f}"

    lines = ["#version 3.7;",
             "global_settings { assumed_gamma 1.0 max_trace_level 5 }",
             "camera { location <0, 3, -9> look_at <0, 0.8, 0> angle 50 }",
             "light_source { <-6, 10, -8> color rgb <1, 0.95, 0.9> }",
             "light_source { <7, 6, -3> color rgb <0.4, 0.45, 0.5> }",
             "sky_sphere { pigment { gradient y color_map { [0 color rgb <0.6, 0.7, 0.9>] "
             "[1 color rgb <0.1, 0.2, 0.5>] } } }",
             "plane { y, 0 pigment { checker color rgb 0.9 color rgb 0.2 scale 1.2 } "
             "finish { reflection 0.15 } }"]
    for _ in range(objects):
        x, z = num(-4, 4), num(-2, 6)
        colour = f"<{num(0, 1)}, {num(0, 1)}, {num(0, 1)}>"
        look = f"pigment {{ color rgb {colour} }} finish {{ phong {num(0, 0.9)} " \
               f"reflection {num(0, 0.4)} }}"
        kind = rng.below(4)
        size = 0.3 + 0.5 * rng.unit()
        if kind == 0:
            lines.append(f"sphere {{ <{x}, {size:.3f}, {z}>, {size:.3f} {look} }}")
        elif kind == 1:
            lines.append(f"box {{ <{-size:.3f}, 0, {-size:.3f}>, <{size:.3f}, {2 * size:.3f}, "
                         f"{size:.3f}> rotate y*{rng.below(90)} translate <{x}, 0, {z}> {look} }}")
        elif kind == 2:
            lines.append(f"cylinder {{ <0, 0, 0>, <0, {num(0.5, 2)}, 0>, {size / 2:.3f} "
                         f"translate <{x}, 0, {z}> {look} }}")
        else:
            lines.append(f"torus {{ {size:.3f}, {size / 3:.3f} "
                         f"translate <{x}, {size / 3:.3f}, {z}> {look} }}")
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- literal (small control files)
def literal(text: str) -> bytes:
    """A file whose content the workload.toml gives: a grammar, a list of utterances."""
    return text.encode()


GENERATORS: dict[str, Callable[..., bytes]] = {
    "text": text, "c_program": c_program, "ppm": ppm, "wav": wav, "y4m": y4m,
    "pov_scene": pov_scene, "sentences": sentences, "literal": literal,
}


def _check(definition: dict, where: str) -> tuple[str, dict]:
    if not isinstance(definition, dict) or "generator" not in definition:
        raise UserError(f"{where}: an input is a table with a generator "
                        f"(one of {', '.join(GENERATORS)}) and its parameters")
    params = {k: v for k, v in definition.items() if k != "generator"}
    name = definition["generator"]
    if name not in GENERATORS:
        raise UserError(f"{where}: unknown input generator '{name}'; "
                        f"choose one of {', '.join(GENERATORS)}")
    import inspect
    accepted = inspect.signature(GENERATORS[name]).parameters
    unknown = set(params) - set(accepted)
    missing = {p for p, spec in accepted.items() if spec.default is inspect.Parameter.empty
               and p not in params}
    if unknown or missing:
        raise UserError(f"{where}: generator '{name}' takes "
                        f"{', '.join(accepted)}; " +
                        (f"unknown {', '.join(sorted(unknown))}" if unknown else
                         f"missing {', '.join(sorted(missing))}"))
    return name, params


def validate(definition: dict, where: str) -> None:
    """A one-line error for a definition no generator can make."""
    _check(definition, where)


def identity(definition: dict) -> str:
    """What names the input in run ids: its definition and the generators' source."""
    return hash_bytes(hash_json(definition), hash_file(SOURCE))


def make(definition: dict, where: str) -> Path:
    """The input file (made once, then cached by :func:`identity`)."""
    name, params = _check(definition, where)
    path = cache_dir() / "inputs" / identity(definition)
    if not path.is_file():
        write_atomic(path, GENERATORS[name](**params))
    return path
