"""Code extraction from a model reply, by the rules of inspect_evals SciCode 3-A.

Which code runs decides the score, so these rules are reproduced exactly (spec scicode.md §3),
with one deliberate fix: the fallback that deletes fence markers also deletes a python label
(``py``/``python3``) so that no stray label line is left in the code. ``original_extract`` is the
original SciCode harness's rule, kept for parity runs.
"""

from __future__ import annotations

import ast
import re

PYTHON_TAGS = ("python3", "python", "py")

# Where a block ends: a bare fence line, just before any other fence line, a fence glued to the
# end of the last code line, or the end of the text (the last alternative is captured so that an
# unclosed *unlabelled* fence, usually a stray closing fence, can be ignored).
_END = r"(?:^```[ \t\r]*$|(?=^```)|(?<=\S)```[ \t\r]*$|(\Z))"
_TAG = "|".join(PYTHON_TAGS)
# A labelled opener starts a line, or follows prose on the same line when nothing follows the label.
_LABELLED = re.compile(
    rf"(?:^```[ \t]*(?:{_TAG})(?=[\s`])[^\n]*|```[ \t]*(?:{_TAG})[ \t]*)\r?\n(.*?){_END}",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)
# Possessive (*+): the label and the rest of its line would otherwise trade characters
# quadratically on a long opener line that never ends.
_ANY = re.compile(rf"^```[ \t]*+([^\s`]*+)[^\n]*+\r?\n(.*?){_END}", re.DOTALL | re.MULTILINE)
_FENCE_MARK = re.compile(rf"```(?:{_TAG})?(?![\w])|```", re.IGNORECASE)
_HEADER_NAME = re.compile(r"^\s*(?:def|class)\s+(\w+)", re.MULTILINE)
# The original deletes every line that starts an import, leading whitespace and blank lines
# included: re.sub(r"^\s*(import .*|from .*\s+import\s+.*)", "", code, flags=re.M). That regex is
# quadratic (every line start of a blank run rescans the run; "from" then a long run of spaces
# backtracks through it), so _strip_imports finds the same spans in one pass: a line whose first
# non-blank text is "import " or "from ", its span (the "from" rule written to backtrack only at
# non-blank characters) and the first line start of the blank run before it.
_IMPORT_START = re.compile(r"^[^\S\n]*+(?=import |from )", re.MULTILINE)
_IMPORT_SPAN = re.compile(r"import .*|from (?:.*\S)?\s++import\s+.*")
MAX_COMPLETION_CHARS = 500_000
"""Longer replies are not parsed (parsing costs about 150 bytes of memory per character): they
are kept whole, and the step fails as too large without running."""


def header_name(function_header: str) -> str | None:
    """The function or class a step's header declares (the first ``def``/``class``)."""
    match = _HEADER_NAME.search(function_header)
    return match.group(1) if match else None


def code_blocks(text: str) -> list[str]:
    """Python-labelled fenced blocks in order; if there are none, the closed unlabelled ones."""
    labelled = [m.group(1) for m in _LABELLED.finditer(text) if m.group(1).strip()]
    if labelled:
        return labelled
    return [
        m.group(2)
        for m in _ANY.finditer(text)
        if not m.group(1) and m.group(2).strip() and m.group(3) is None
    ]


def top_level_names(code: str) -> set[str] | None:
    """Names of top-level functions and classes, or None when the code does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # MemoryError and RecursionError: the parser's "nested too deeply"
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def extract_code(completion: str, function_header: str) -> str:
    """The code of a reply that will run for this step (inspect_evals 3-A rules).

    Of the blocks, the last one that parses and defines the header's name wins (a fix after a
    draft), else the first. The fence-stripped text wins when it parses and defines a function
    or class the chosen block lacks (a solution split across blocks), and when there is no block.
    """
    if len(completion) > MAX_COMPLETION_CHARS:
        return completion
    stripped = _FENCE_MARK.sub("", completion).strip()
    blocks = [block.strip() for block in code_blocks(completion)]
    if not blocks:
        return stripped
    name = header_name(function_header)
    defining = [b for b in blocks if name and name in (top_level_names(b) or set())]
    chosen = defining[-1] if defining else blocks[0]
    stripped_names = top_level_names(stripped)
    if stripped_names and stripped_names - (top_level_names(chosen) or set()):
        return stripped
    return chosen


def original_extract(completion: str) -> str:
    """The original SciCode harness's rule: first ```python block (else first fence), no imports."""
    if len(completion) > MAX_COMPLETION_CHARS:
        return completion
    if "```" in completion:
        if "```python" in completion:
            code = completion.split("```python", 1)[1].split("```", 1)[0]
        else:
            parts = completion.split("```")
            code = parts[1] if len(parts) > 1 else ""
    else:
        code = completion
    return _strip_imports(code)


def _strip_imports(code: str) -> str:
    """The original's import-line deletion (see ``_IMPORT_START``), in time linear in the code."""
    pieces: list[str] = []
    done = 0  # the original's regex resumes its scan after each deleted span
    for line in _IMPORT_START.finditer(code):
        keyword = line.end()
        if line.start() < done or (span := _IMPORT_SPAN.match(code, keyword)) is None:
            continue
        start = line.start()  # back over blank lines: the original's \s* spans them
        while start > done and code[start - 1].isspace():
            start -= 1
        if start > 0 and code[start - 1] != "\n":  # the first line start in that blank run
            start = code.index("\n", start) + 1
        pieces.append(code[done:start])
        done = span.end()
    pieces.append(code[done:])
    return "".join(pieces)
