"""A SciBench log's protocol and scorers against what this install records for its parameters.

The task this install builds of the run's parameters (``own_log``) writes a protocol record
(data version, subset, problem count, prompt and shots, scorer with errata and tolerance,
timeout, runtime, agent and its limits, the preset's fields) and the books it ran; a field the
log records otherwise was edited, or the run had other data or code than this install. Where
the data were read from (a local copy's path) and the sandbox's isolation and memory limit
describe the machine that ran it, not the protocol: they are notes. The scorers' arguments are
set against those the parameters give, and against those the log's metrics were computed under.
"""

from __future__ import annotations

from typing import Any

from scievals.regrade_verify import differ
from scievals.scibench.regrade.own_log import OwnLog
from scievals.scibench.scorer import scorer_args

MACHINE = ("sandbox", "memory_limit")
"""Protocol keys that describe the machine of the run: a difference is a note."""
LOCAL = " (local "
"""How a data version names the local copy it was read from (``Source.describe``)."""


def check_protocol(own: OwnLog) -> tuple[list[str], list[str]]:
    """(differences, notes): every protocol, book and scorer field the log records otherwise
    than this install would."""
    metadata = own.log.eval.metadata or {}
    ours = dict((own.task.metadata or {}).get("protocol") or {})
    theirs = metadata.get("protocol")
    differences: list[str] = []
    notes: list[str] = []
    if own.protocol_unchecked is not None:
        differences.append(f"protocol not checked: {own.protocol_unchecked}")
    elif not isinstance(theirs, dict):
        differences.append("protocol: the log records none")
    else:
        if _copy(theirs.get("data_version"), ours.get("data_version")):
            notes.append(
                f"the run's data were {theirs['data_version']!r}, read here "
                f"{ours['data_version']!r}"
            )
            ours["data_version"] = theirs["data_version"]
        for key in [*ours, *(k for k in theirs if k not in ours)]:
            lines = differ(f"protocol {key}", theirs.get(key), ours.get(key))
            (notes if key in MACHINE else differences).extend(lines)
    differences += differ("books", metadata.get("books"), (own.task.metadata or {}).get("books"))
    differences += differ("scorers", own.records, scorer_args(own.config))
    for score in own.log.results.scores if own.log.results else []:
        name = score.scorer.split("/")[-1]
        differences += differ(
            f"scorer {name}",
            score.params,
            own.records.get(name),
            ("the metrics were computed under", "the scorer records"),
        )
    return differences, notes


def _copy(theirs: Any, ours: Any) -> bool:
    """Whether two data versions differ only in the local copy they were read from."""
    if not (isinstance(theirs, str) and isinstance(ours, str)) or theirs == ours:
        return False
    return theirs.partition(LOCAL)[0] == ours.partition(LOCAL)[0]
