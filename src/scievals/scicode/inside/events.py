"""The record's events: what a step program's recorder writes, one JSON object a line, and the
order they must come in. The values they carry are ``wire.py``'s forms.

Only the trusted side reads this (``replay.py`` checks every line against it before it decodes a
value); the recorder, which writes the events, is shipped without it. Standard library only.
"""

from __future__ import annotations

from typing import Any

from .wire import WireError

EVENTS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    kind: (frozenset({"e", *required}), frozenset(optional))
    for kind, required, optional in (
        ("bind", {"name", "r"}, ()),
        ("armed", (), ()),
        ("call", {"h", "n"}, {"r", "raise", "mut", "rng"}),
        ("get", {"h", "attr", "r", "n"}, ()),
        ("change", {"n", "path", "r"}, ()),
        ("begin", {"t", "rng"}, ()),
        ("end", {"t"}, ()),
        ("too_large", {"bytes"}, ()),
    )
}
"""Every event the recorder writes, one JSON object a line, by its ``e``: required and optional
fields. ``bind`` (a model name the tests use, before ``armed``); ``call`` and ``get`` (a value
handed to a test, numbered ``n`` from 1 in order, of handle ``h``: a call returns ``r`` or
``raise``s, with the arguments it changed, ``mut``, and the generators it moved, ``rng``);
``change`` (an array handed out earlier, event ``n``, changed in place); ``begin`` and ``end``
of test ``t``, in order; ``too_large`` (the recorder stopped at the bound), last."""
MAX_NAME = 256
MAX_RECORD_ITEMS = 8_000_000
"""JSON values one step's records may hold, all lines together, counted from the bytes before a
line is parsed (commas, colons and opening brackets: never fewer than its values): it bounds
the Python objects the trusted side builds of them. The 50 gold dev steps hold at most about
7,300; an honest list of a million floats about 3 million."""


def json_items(line: bytes) -> int:
    """An upper bound on the JSON values in ``line`` (counted in C, before parsing it)."""
    return line.count(b",") + line.count(b":") + line.count(b"[") + line.count(b"{") + 1


class EventOrder:
    """Checks each event, in order, against ``EVENTS`` and against the events before it: a
    record whose parts disagree with each other or with the schema is refused (``WireError``)."""

    def __init__(self) -> None:
        self.armed = False
        self.served = 0
        self.test: int | None = None
        """The test begun and not ended yet."""
        self.last_test = -1
        self.stopped = False

    def check(self, event: Any) -> str:
        """The event's kind, or ``WireError`` naming what disagrees."""
        kind = event.get("e") if type(event) is dict else None
        if kind not in EVENTS:
            raise WireError(f"unknown event {str(kind)[:40]!r}")
        required, optional = EVENTS[kind]
        keys = set(event)
        if not required <= keys or not keys <= required | optional:
            raise WireError(f"a {kind} event with fields {sorted(keys ^ required)[:4]} amiss")
        if self.stopped:
            raise WireError("an event after the recorder stopped at its bound")
        getattr(self, f"_{kind}")(event)
        return kind

    def _number(self, value: Any, what: str, low: int = 0) -> int:
        if type(value) is not int or not low <= value < 1 << 62:
            raise WireError(f"malformed {what}")
        return value

    def _bind(self, event: dict[str, Any]) -> None:
        name = event["name"]
        if self.armed or type(name) is not str or len(name) > MAX_NAME:
            raise WireError("a bind event after the names were armed, or of a malformed name")

    def _armed(self, event: dict[str, Any]) -> None:
        if self.armed:
            raise WireError("armed twice")
        self.armed = True

    def _served(self, event: dict[str, Any]) -> None:
        """A value handed to a test: inside a test, numbered next."""
        self._number(event["h"], "handle number")
        if self.test is None:
            raise WireError(f"a {event['e']} event outside any test")
        if self._number(event["n"], "event number", 1) != self.served + 1:
            raise WireError(f"event number {event['n']} where {self.served + 1} comes next")
        self.served += 1

    def _call(self, event: dict[str, Any]) -> None:
        self._served(event)
        if ("r" in event) == ("raise" in event):
            raise WireError("a call event that both returns and raises, or neither")
        raised = event.get("raise")
        if raised is not None and not (
            type(raised) is list and len(raised) == 2 and all(type(x) is str for x in raised)
        ):
            raise WireError("malformed raise")
        mutated = event.get("mut", {})
        if type(mutated) is not dict or not all(type(k) is str for k in mutated):
            raise WireError("malformed changed arguments")
        if type(event.get("rng", {})) is not dict:
            raise WireError("malformed random state")

    def _get(self, event: dict[str, Any]) -> None:
        self._served(event)
        if type(event["attr"]) is not str or len(event["attr"]) > MAX_NAME:
            raise WireError("malformed attribute name")

    def _change(self, event: dict[str, Any]) -> None:
        if not 1 <= self._number(event["n"], "event number", 1) <= self.served:
            raise WireError(f"a change of event {event['n']}, which was never served")
        path = event["path"]
        if type(path) is not list or len(path) > 1 or not all(type(i) is int for i in path):
            raise WireError("malformed change path")

    def _begin(self, event: dict[str, Any]) -> None:
        test = self._number(event["t"], "test number")
        if self.test is not None or test <= self.last_test:
            raise WireError(f"test {test + 1} begun out of order")
        if not self.armed or type(event["rng"]) is not dict:
            raise WireError("a test begun before the names were armed, or malformed")
        self.test = test

    def _end(self, event: dict[str, Any]) -> None:
        if self._number(event["t"], "test number") != self.test:
            raise WireError(f"test {event['t'] + 1} ended while another ran")
        self.last_test, self.test = event["t"], None

    def _too_large(self, event: dict[str, Any]) -> None:
        self._number(event["bytes"], "size")
        self.stopped = True
