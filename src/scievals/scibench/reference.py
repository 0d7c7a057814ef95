"""The reference answerer: a SciBench prompt's gold answer, boxed, in the unit convention it states.

It checks the harness end to end: a model that always answers with the gold must score every
problem under the robust scorer, and exactly what the official code gives under the faithful one
(576/580 on main: the four diff golds that ``float()`` cannot read). The convention follows the unit
the prompt states: when the official code strips the 10^k from the unit (rescaled items) the
answer is given at full magnitude as "m \\times 10^{k}"; otherwise it is the stored number.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence
from functools import cache

from scievals.scibench.answers import official_unit
from scievals.scibench.dataset import BOOKS, ENV_VAR, VERSIONS, Record, Source

# (version, folder) of the data the tasks of this process loaded, most recent first: old and main
# share problem texts whose golds differ, so the version a task ran decides.
_used: list[tuple[str, str]] = []


def remember(source: Source) -> None:
    """Let the reference know (first) the data a task is about to evaluate."""
    entry = (source.version, str(source.root))
    if not _used or _used[0] != entry:
        if entry in _used:
            _used.remove(entry)
        _used.insert(0, entry)
        _index.cache_clear()


def gold_in_convention(record: Record) -> str:
    """The gold as the prompt asks for it (full magnitude on rescaled items, else as stored)."""
    unit = official_unit(record.unit)
    number = record.answer_number.strip()
    if unit.rescaled and unit.exponent is not None:
        return f"{number} \\times 10^{{{unit.exponent}}}"
    return number


def reply_for(record: Record) -> str:
    """A reply that states the gold both boxed and as a tiny program (for the tool settings)."""
    unit = official_unit(record.unit)
    number = record.answer_number.strip()
    scaled = unit.rescaled and unit.exponent is not None
    value = f"{number}e{unit.exponent}" if scaled else number
    program = f"```\nprint({value!r})\n```"
    return (
        f"Reference solution for {record.book} problem {record.problemid.strip()}.\n{program}\n"
        f"The answer is therefore \\boxed{{{gold_in_convention(record)}}}."
    )


def _sources() -> list[Source]:
    """Every data copy readable without the network: those tasks used, then the env folder."""
    places = list(_used)
    env = os.environ.get(ENV_VAR)
    if env:
        places += [(version, env) for version in VERSIONS]
    sources = []
    for version, place in places:
        try:
            sources.append(Source(version, place))
        except (FileNotFoundError, ValueError):
            continue
    return sources


@cache
def _index() -> tuple[tuple[str, tuple[Record, ...]], ...]:
    """Problem text -> records (first source first) for every test, pool and image problem."""
    entries: dict[str, list[Record]] = {}
    for source in _sources():
        records: list[Record] = []
        for book in BOOKS:
            records += source.book(book) + source.book(book, pool="sol")
        if (source.root / "dataset" / "img").is_dir():
            records += source.multimodal()
        for record in records:
            entries.setdefault(record.problem_text.strip(), []).append(record)
    return tuple(sorted(((k, tuple(v)) for k, v in entries.items()), key=lambda kv: -len(kv[0])))


def _image_digests(images: Sequence[str]) -> set[str]:
    """sha256 of images given as data URIs (or raw base64)."""
    digests = set()
    for image in images:
        data = image.split(",", 1)[1] if image.startswith("data:") else image
        try:
            digests.add(hashlib.sha256(base64.b64decode(data)).hexdigest())
        except ValueError:
            continue
    return digests


def find(prompt_text: str, images: Sequence[str] = ()) -> Record | None:
    """The problem a prompt asks: the longest known problem text in it, with a matching unit.

    Image problems can share a text (img/problem 61 and 62): the image then decides.
    """
    for text, records in _index():
        if not text or text not in prompt_text:
            continue
        matches = [
            r
            for r in records
            if r.pool in ("img", "img_sol") or f"is {official_unit(r.unit).shown}." in prompt_text
        ]
        digests = _image_digests(images)
        if len(matches) > 1 and digests:
            for record in matches:
                image = record.image
                if image is not None and hashlib.sha256(image.read_bytes()).hexdigest() in digests:
                    return record
        if matches:
            return matches[0]
    return None


def answer(prompt_text: str, images: Sequence[str] = ()) -> str | None:
    """The reference reply to a SciBench prompt (its last user message text, and any images).

    Returns None when the prompt is not a SciBench problem.
    """
    record = find(prompt_text, images)
    return None if record is None else reply_for(record)
