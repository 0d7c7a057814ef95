"""Hypothesis strategies for hostile model text, shared by the parser totality tests.

Each test module names the fragments its parser cares about; the strategy mixes them with random
unicode, storms (one fragment repeated thousands of times) and numbers of thousands of digits, so
that one run covers deep nesting, unbalanced groups, long whitespace runs and huge exponents.
The settings keep a run bounded and reproducible: a fixed example count and no example database
left behind in the working tree. No per-example deadline: a wall-clock figure fails on a busy
machine, and the worst-case tables test linear time as a CPU-time ratio (tests/timing.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Characters that break naive parsers: other scripts' digits, superscripts, a lone surrogate,
# NUL, invisible spaces, line separators.
ODD_CHARACTERS = ["٣", "१", "１", "𝟗", "²", "½", "\x00", "\ud800", "\u200b", "\u2028", "\x85", "\r"]
GIANT = 10**6  # characters in the table-driven worst cases


def hostile_text(fragments: Sequence[str], max_pieces: int = 12) -> st.SearchStrategy[str]:
    """Text made of ``fragments``, odd characters, random unicode, storms and huge numbers."""
    vocabulary = st.sampled_from([*fragments, *ODD_CHARACTERS])
    piece = st.one_of(
        vocabulary,
        st.text(max_size=20),
        st.builds(lambda f, n: f * n, vocabulary, st.integers(1, 4000)),
        st.builds(lambda n: "9" * n, st.integers(300, 6000)),
    )
    return st.lists(piece, max_size=max_pieces).map("".join)
