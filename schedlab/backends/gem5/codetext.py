"""The text of a Python file that gem5 runs, as the gem5-side code hash reads it
(``schedlab.backends.gem5.binary.config_hash``).

Standard library only, and importable by path: the hash must come out the same under every
Python a host may run it with, and tests/test_gem5_backend.py checks that under each
interpreter installed, including ones too old to import the package.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path


def read_code(path: Path) -> str:
    """A Python file's text without its comments, docstrings and blank lines, and without
    trailing spaces: what gem5 runs of it. Editing the prose of the model renames no run
    (nor invalidates a user's results store); any change to the code does. Text, not the
    syntax tree: ``ast.dump``'s form changes between Python versions, and the hash must
    not depend on the host's Python. Lines are split at newlines alone (as the tokenizer and
    the parser count them, not ``str.splitlines()``), and the lines a string spans, to its
    last, are kept as they are (their spaces are the string's)."""
    source = path.read_bytes().decode("utf-8")
    cut = {}                                        # 0-based line -> column of its comment
    verbatim: set[int] = set()      # 0-based lines a multi-line string starts on or crosses
    fstrings: list[int] = []        # Python 3.12 on: where the f-strings being read began
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[token.type]
        if kind == "COMMENT":
            cut[token.start[0] - 1] = token.start[1]
        elif kind == "FSTRING_START":               # an f-string is one token before 3.12
            fstrings.append(token.start[0])
        elif kind in ("STRING", "FSTRING_END"):
            first = fstrings.pop() if kind == "FSTRING_END" else token.start[0]
            verbatim.update(range(first - 1, token.end[0] - 1))
    lines = [line if i in verbatim else line[:cut.get(i, len(line))].rstrip()
             for i, line in enumerate(source.split("\n"))]
    dropped: set[int] = set()                      # 0-based lines of whole-line docstrings
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)) or not node.body:
            continue
        first = node.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            continue
        # ast's columns count UTF-8 bytes.
        head = lines[first.lineno - 1].encode()[:first.col_offset]
        tail = lines[first.end_lineno - 1].encode()[first.end_col_offset:]
        if not head.strip() and not tail.strip():  # alone on its lines (else kept)
            dropped.update(range(first.lineno - 1, first.end_lineno))
    return "\n".join(line for i, line in enumerate(lines)
                     if i not in dropped and (line or i in verbatim))
