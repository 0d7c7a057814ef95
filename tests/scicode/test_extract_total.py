"""Code extraction is total: any reply gets code, quickly, never an exception.

Property-based runs over hostile replies (tests/hostile_text.py), the original harness's import
deletion checked against its own regex on short texts (where that regex's quadratic time does not
matter), and a table of worst cases at the largest size that is parsed, each costing CPU time
in proportion to its length.
"""

from __future__ import annotations

import re

import pytest
from hostile_text import FUZZ, hostile_text
from hypothesis import given
from hypothesis import strategies as st
from timing import assert_linear

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
WORST_CASES = {  # each built at size n: N, and N / SIZE_RATIO to compare with
    "unterminated-fence-line": lambda n: "```" + "a" * n,
    "unterminated-fence-line-spaces": lambda n: "```" + "a" * (n // 2) + " " * (n // 2),
    "labelled-fence-then-spaces": lambda n: "```python" + " " * n,
    "fence-lines": lambda n: "```\n" * (n // 4),
    "backticks": lambda n: "`" * n,
    "glued-fences": lambda n: ("x```" + " " * 100 + "y\n") * (n // 106),
    "python-fences-after-prose": lambda n: "x ```python\n" * (n // 12),
    "deep-unary": lambda n: "```python\n" + "-" * n + "1\n```",
    "deep-parentheses": lambda n: "```python\n" + "(" * n + "\n```",
    "deep-not": lambda n: "```python\nx = " + "not " * (n // 4) + "1\n```",
    "long-chain": lambda n: "```python\nx = " + "+".join(["1"] * (n // 2)) + "\n```",
    "blank-lines": lambda n: "\n" * n,
    "from-then-spaces": lambda n: "from" + " " * n + "x",
    "many-blocks": lambda n: "```py\ndef f(x):\n  return 1\n```\n" * (n // 32),
    "nul-and-surrogate": lambda n: "```python\n\x00\ud800\n```" * (n // 20),
}


@pytest.mark.parametrize("name", list(WORST_CASES))
def test_worst_cases_in_linear_time(name: str) -> None:
    """Each worst case, at the largest size parsed, costs at most about ten times its tenth
    (CPU time: a busy machine slows both alike); a quadratic parser costs a hundred times."""
    for label, call in {
        "extract_code": lambda reply: extract_code(reply, HEADER),
        "original_extract": original_extract,
    }.items():
        code = assert_linear(call, WORST_CASES[name], N, f"{label} on {name}")
        assert isinstance(code, str)
