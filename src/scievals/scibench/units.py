"""A SciBench unit as the official code treats it: the three power-of-ten paths (spec 1.3).

Both scorers and the prompts read units through here, so the unit a model is shown and the scale
its answer is compared at cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The official unit regex: optional `$`, `10^`, optional `{`, an integer, optional `}` and `$`.
_UNIT_SCALE = re.compile(r"[\$]?\ *10\^[{]?\ *-?[0-9]+\ *[}]?\ *[\$]?")
# The official power regex used to read k out of "... 10^{k} ..." (first match wins).
POWER = re.compile(r"10\^[{]?\ *-?[0-9]+\ *[}]?")


@dataclass(frozen=True)
class Unit:
    """A record's unit as the official code treats it.

    ``shown`` is the U of "The unit of the answer is U."; ``rescaled`` says whether the gold is
    compared at full magnitude (mantissa x 10^k) with the x10^ parsing of the model's answer.
    ``exponent`` is k when the raw unit carries a power of ten (whatever the path).
    """

    raw: str
    shown: str
    rescaled: bool
    exponent: int | None


def official_unit(raw: str) -> Unit:
    """Apply the official ``remove_not``: keep the text after the last 10^k, tested for truthiness.

    The remainder of "$10^{21}$ " is " " (true: rescaled, blank unit shown); that of "$10^{42}$"
    is "" (false: the raw unit is shown and the mantissa is compared).
    """
    remainder = _UNIT_SCALE.split(raw)[-1] if _UNIT_SCALE.search(raw) else None
    shown = remainder if remainder else raw
    return Unit(raw=raw, shown=shown, rescaled=shown != raw, exponent=unit_exponent(raw))


def unit_exponent(raw: str) -> int | None:
    """k of the first ``10^k`` in a unit, as the official gold rescaling reads it."""
    match = POWER.search(raw)
    if match is None:
        return None
    text = match.group(0)[3:].strip("{} ")
    digits = text.lstrip("-").lstrip("0") or "0"
    # int() refuses more than 4,300 digits; past a double's range every k scales alike (inf or 0)
    k = int(digits) if len(digits) <= 6 else 10**6
    return -k if text.startswith("-") else k
