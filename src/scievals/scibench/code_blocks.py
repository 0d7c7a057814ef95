"""The program in a tool-setting reply: the official span, and the fenced block without its tag."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_LANG_TAG = re.compile(r"^[ \t]*(?:python3?|py|wolfram|mathematica|wl)[ \t]*\r?\n", re.IGNORECASE)


def official_code(reply: str) -> str:
    """The official ``extract_lan`` code span: after the first ``` up to the next (tag included)."""
    after = reply[reply.find("```") + 3 :]
    return after[: after.find("```")]


def robust_code(reply: str) -> str | None:
    """The first fenced block with its language tag removed; None when the reply has no fence."""
    match = _FENCE.search(reply)
    if match is None:
        return None
    return _LANG_TAG.sub("", match.group(1), count=1)
