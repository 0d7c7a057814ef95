"""Hypothesis strategies for hostile model text, shared by the parser totality tests.

Each test module names the fragments its parser cares about; the strategy mixes them with random
unicode, storms (one fragment repeated thousands of times) and numbers of thousands of digits, so
that one run covers deep nesting, unbalanced groups, long whitespace runs and huge exponents.
The settings keep a run bounded and reproducible: a fixed example count, a per-example deadline
and no example database left behind in the working tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=150,
    deadline=timedelta(seconds=2),  # examples run in milliseconds; this catches blowups only
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Characters that break naive parsers: other scripts' digits, superscripts, a lone surrogate,
# NUL, invisible spaces, line separators.
ODD_CHARACTERS = ["٣", "१", "１", "𝟗", "²", "½", "\x00", "\ud800", "\u200b", "\u2028", "\x85", "\r"]
GIANT = 10**6  # characters in the table-driven worst cases
TIME_LIMIT_S = 5.0  # a linear parser reads GIANT characters in well under a second


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


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """The call's result and its wall time in seconds."""
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started
