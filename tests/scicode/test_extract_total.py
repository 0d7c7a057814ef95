"""Code extraction is total: any reply gets code, quickly, never an exception.

Property-based runs over hostile replies (tests/hostile_text.py), the original harness's import
deletion checked against its own regex on short texts (where that regex's quadratic time does not
matter), and a table of worst cases at the largest size that is parsed, with a time bound.
"""

from __future__ import annotations

import re

import pytest
from hostile_text import FUZZ, TIME_LIMIT_S, hostile_text, timed
from hypothesis import given
from hypothesis import strategies as st

from scievals.scicode.extract import (
    MAX_COMPLETION_CHARS,
    _strip_imports,
    code_blocks,
    extract_code,
    original_extract,
    top_level_names,
)

HEADER = "def f(x):\n    '''Doc.'''"
CODE = [
    "```", "```python\n", "```Python3\n", "```py", "``` python\n", "```bash\n", "`", "\n", "\r\n",
    " ", "\t", "x```", "def f(x):\n", "    return x\n", "class C:\n", "import numpy as np\n",
    "from math import pi\n", "from ", "import ", " import ", "(", ")", "[", "-", "not ", "lambda: ",
    "\\", "'''", '"', "#", "f(", "1" * 50, ":", "=",
]  # fmt: skip
# The original SciCode harness's own rule, the oracle for _strip_imports.
ORIGINAL_IMPORTS = re.compile(r"^\s*(import .*|from .*\s+import\s+.*)", re.MULTILINE)
IMPORT_PIECES = [
    "import ", "from ", "import", "from", "from a import b", "import\n", " ", "\t", "\n", "\n\n",
    "\r", "\x0b", "\x1c", "\x85", "\u2028", "\u00a0", "a", "x", "#",
]  # fmt: skip


@FUZZ
@given(reply=hostile_text(CODE))
def test_extraction_is_total(reply: str) -> None:
    code = extract_code(reply, HEADER)
    assert isinstance(code, str)
    assert isinstance(original_extract(reply), str)
    assert all(isinstance(block, str) and block in reply for block in code_blocks(reply))
    names = top_level_names(code)
    assert names is None or isinstance(names, set)


@FUZZ
@given(code=st.lists(st.sampled_from(IMPORT_PIECES), max_size=16).map("".join))
def test_import_deletion_matches_the_original_regex(code: str) -> None:
    assert _strip_imports(code) == ORIGINAL_IMPORTS.sub("", code)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import os\nx = 1", "\nx = 1"),
        ("\n\n  import os\nx", "\nx"),  # the blank lines before an import go with it
        ("x = 1\n\n\nfrom a import b\ny", "x = 1\n\ny"),  # from the first line start of the run
        ("from a import b, \\\n  c\nz", "\n  c\nz"),  # one line only, continuation kept
        ("from a import\nnext_line()\nz", "\nz"),  # "\s+" after import eats the next line
        ("from a\n\n import b\nz", "\nz"),  # "\s+" before import crosses lines too
        ("from ab import", "from ab import"),  # nothing after "import": kept
        ("fromage import x", "fromage import x"),
        ("def f():\n    import math\n    return 1", "def f():\n\n    return 1"),
        ("from  import x", ""),
        ("a\u2028import x", "a\u2028import x"),  # a line separator is not a line start for ^
    ],
)
def test_import_deletion_examples(code: str, expected: str) -> None:
    assert _strip_imports(code) == expected == ORIGINAL_IMPORTS.sub("", code)


N = MAX_COMPLETION_CHARS - 10  # the largest reply that is parsed
WORST_CASES = {
    "unterminated-fence-line": "```" + "a" * N,
    "unterminated-fence-line-spaces": "```" + "a" * (N // 2) + " " * (N // 2),
    "labelled-fence-then-spaces": "```python" + " " * N,
    "fence-lines": "```\n" * (N // 4),
    "backticks": "`" * N,
    "glued-fences": ("x```" + " " * 100 + "y\n") * (N // 106),
    "python-fences-after-prose": "x ```python\n" * (N // 12),
    "deep-unary": "```python\n" + "-" * N + "1\n```",
    "deep-parentheses": "```python\n" + "(" * N + "\n```",
    "deep-not": "```python\nx = " + "not " * (N // 4) + "1\n```",
    "long-chain": "```python\nx = " + "+".join(["1"] * (N // 2)) + "\n```",
    "blank-lines": "\n" * N,
    "from-then-spaces": "from" + " " * N + "x",
    "many-blocks": "```py\ndef f(x):\n  return 1\n```\n" * (N // 32),
    "nul-and-surrogate": "```python\n\x00\ud800\n```" * (N // 20),
}


@pytest.mark.parametrize("name", list(WORST_CASES))
def test_worst_cases_in_bounded_time(name: str) -> None:
    reply = WORST_CASES[name]
    for label, call in {
        "extract_code": lambda: extract_code(reply, HEADER),
        "original_extract": lambda: original_extract(reply),
    }.items():
        code, seconds = timed(call)
        assert isinstance(code, str)
        assert seconds < TIME_LIMIT_S, f"{label} took {seconds:.1f} s on {name}"
