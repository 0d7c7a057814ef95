"""The trusted side: re-running a step's tests on what the model's code returned in the sandbox.

The sandboxed program records, for every use the tests made of the model's code, the plain value
that came back (``inside/recorder.py``). Here each test runs again in a namespace of our own: the
problem's dependencies and the comparison helpers are the harness's, the real target is bound,
and every name the model defined is a stand-in that hands back the recorded values in order. So
the benchmark's own computations (``expected = np.array(...)``, ``np.isclose(...)`` on the
model's result, self-checking tests) are all done here, and a record can at most claim what a
model function returned, which the model decides anyway.

The records are hostile input: their size is bounded before they are read, each value is
decoded within bounds (``wire.decode``), and only attribute reads and calls are possible on a
model object; anything else fails the test as a value the benchmark cannot judge.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import os
import random
import stat
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy

from scievals.scicode.grading.rewrite import CHECK, SOLVE, TARGET, TestPlan, dependency_names
from scievals.scicode.inside.compare import HELPERS, STRICT_NUMPY, has_empty
from scievals.scicode.inside.events import MAX_RECORD_ITEMS, EventOrder, json_items
from scievals.scicode.inside.wire import (
    ARRAY_PROBES,
    MAX_RECORD_BYTES,
    NotPlain,
    View,
    WireError,
    decode,
    encode,
)

MAX_EVENTS = 2_000_000


class RecordError(ValueError):
    """The records are malformed or over a bound (the step fails; nothing is trusted)."""


class Stopped(Exception):
    """The program stopped before it got as far as the trusted test needs."""

    def __init__(self, message: str, before_tests: bool = False) -> None:
        super().__init__(message)
        self.before_tests = before_tests


class Unsupported(Exception):
    """The test used a model object in a way that cannot be judged outside the sandbox."""


class ModelExit(Exception):
    """The model's code raised SystemExit or another exit while a test was calling it."""


@dataclass
class Records:
    """What one execution recorded: its events in order, and what the tests began and ended."""

    events: list[dict[str, Any]] = field(default_factory=list)
    begun: set[int] = field(default_factory=set)
    ended: set[int] = field(default_factory=set)


def parse_records(lines: bytes | Iterable[bytes]) -> Records:
    """The events of a records file (already bounded in size), line by line, each checked
    against the schema and the events before it (``events.EventOrder``) and counted against
    ``MAX_RECORD_ITEMS`` before it is parsed."""
    if isinstance(lines, bytes):
        lines = lines.split(b"\n")
    records = Records()
    order = EventOrder()
    items = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if number > MAX_EVENTS:
            raise RecordError(f"more than {MAX_EVENTS} events")
        items += json_items(line)
        if items > MAX_RECORD_ITEMS:
            raise RecordError(f"more than {MAX_RECORD_ITEMS} values (the records' bound)")
        try:
            event = json.loads(line)
            kind = order.check(event)
        except WireError as exc:
            raise RecordError(f"line {number}: {exc}") from None
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"unreadable event on line {number}") from exc
        if kind in ("begin", "end"):
            (records.begun if kind == "begin" else records.ended).add(event["t"])
        records.events.append(event)
    return records


def read_records(path: str) -> Records:
    """The events of a spooled records file (``sandbox/kept.py``), read a line at a time: never
    through a link, only a regular file within ``MAX_RECORD_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise RecordError(f"the records could not be opened: {exc.strerror}") from None
    with open(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
            raise RecordError("the records are not a regular file within their bound")
        return parse_records(fh)


class _Handle:
    """The trusted stand-in for a model object: attribute reads and calls replay events; its
    length, items and NumPy array are what the sandbox recorded of it (``wire.view_form``).
    Anything else the test does with it cannot be judged outside the sandbox."""

    __slots__ = ("_replay", "_number", "_type", "_view")

    def __init__(self, replay: Replay, number: int, kind: str, view: View | None) -> None:
        object.__setattr__(self, "_replay", replay)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_type", kind)
        object.__setattr__(self, "_view", view)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        view = self._view
        if attr in ARRAY_PROBES and view is not None and view.array is not None:
            # Of the recorded array, never what the object says of itself (the sandbox's
            # proxy answers the same without a record).
            return getattr(view.array, attr)
        if attr in ARRAY_PROBES and not self._replay.next_is("get", self._number, attr):
            raise AttributeError(attr)  # NumPy's probe (``np.size``) of a value with no array
        return self._replay.get(self._number, attr, self._type)

    def __setattr__(self, attr: str, value: Any) -> None:
        """The test set an attribute of a model object: the sandbox did the same."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._replay.call(self._number, args, kwargs)

    def __len__(self) -> int:
        view = self._view
        if view is None:
            raise TypeError(f"object of type '{self._type}' has no len()")
        if view.length is None:
            raise self._unsupported_use("took the length of")
        return view.length

    def __iter__(self) -> Any:
        view = self._view
        if view is not None and not view.iterable:
            raise TypeError(f"'{self._type}' object is not iterable")
        if view is not None and view.items is not None:
            return iter(view.items)
        if view is not None and view.array is not None:
            return iter(view.array)
        raise self._unsupported_use("iterated")

    def __getitem__(self, key: Any) -> Any:
        view = self._view
        if view is not None and not view.getitem:
            raise TypeError(f"'{self._type}' object is not subscriptable")
        if view is not None and view.items is not None and type(key) in (int, slice):
            return view.items[key]
        if view is not None and view.array is not None:
            return view.array[key]
        raise self._unsupported_use(f"indexed with {type(key).__name__}")

    def __array__(self, dtype: Any = None, copy: Any = None) -> numpy.ndarray:
        view = self._view
        if view is None or view.array is None:
            raise Unsupported(
                f"NumPy cannot make a plain array of the {self._type} the model's code returned"
            )
        return view.array if dtype is None else view.array.astype(dtype)

    def plain(self) -> Any:
        """What the zero-size rule sees of it: its array or its items."""
        view = self._view
        if view is None:
            return None
        return view.array if view.array is not None else view.items

    def _unsupported_use(self, how: str) -> Unsupported:
        return Unsupported(
            f"the test {how} a {self._type} the model's code returned; only plain data, and the "
            "length, items and NumPy array of other values, can be judged"
        )

    def _unsupported(self, *args: Any, **kwargs: Any) -> Any:
        raise self._unsupported_use("used as a value (an operator or conversion on)")

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = _unsupported
    __gt__ = __ge__ = __add__ = __sub__ = __mul__ = __truediv__ = __neg__ = __abs__ = _unsupported
    __radd__ = __rsub__ = __rmul__ = __rtruediv__ = __pow__ = __matmul__ = __float__ = _unsupported
    __int__ = __index__ = __complex__ = __contains__ = __hash__ = _unsupported


def _exception(name: Any, message: Any) -> Exception:
    """An exception like the one the model's code raised (never an exit of our own)."""
    name, message = str(name)[:80], str(message)[:300]
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        try:
            return found(message)
        except Exception:  # noqa: BLE001 - constructors with other signatures
            pass
    if isinstance(found, type) and issubclass(found, BaseException):
        return ModelExit(f"{name}: {message}".rstrip(": "))
    kind = name if name.isidentifier() else "ModelError"
    return type(kind, (Exception,), {})(message)


class Replay:
    """Hands the recorded events back, in order, to one step's trusted tests."""

    def __init__(self, records: Records) -> None:
        self.events = records.events
        self.position = 0
        self.handles: dict[int, _Handle] = {}
        self.returned: dict[int, Any] = {}
        """Values handed to the test, by their event's number (``_change`` updates them)."""

    def handle(self, number: int, kind: str = "object", view: View | None = None) -> _Handle:
        if number not in self.handles:
            self.handles[number] = _Handle(self, number, kind, view)
        return self.handles[number]

    def value(self, form: Any) -> Any:
        try:
            return decode(form, self.handle)
        except (WireError, RecursionError, ValueError, TypeError, MemoryError) as exc:
            raise RecordError(f"unreadable recorded value: {str(exc)[:200]}") from exc

    def next_is(self, kind: str, number: int, attr: str | None = None) -> bool:
        """Whether the next recorded event is this use of this model object."""
        if self.position >= len(self.events):
            return False
        event = self.events[self.position]
        return event.get("e") == kind and event.get("h") == number and event.get("attr") == attr

    def _next(
        self, kind: str, number: int, attr: str | None = None, of: str = "object"
    ) -> dict[str, Any]:
        if self.position >= len(self.events):
            raise Stopped("the program stopped before this value was returned")
        event = self.events[self.position]
        if event.get("e") != kind or event.get("h") != number or event.get("attr", None) != attr:
            if kind == "get":
                raise Unsupported(
                    f"the test's comparison read attribute {attr!r} of a {of} the model's code "
                    "returned, which the program never read: only plain data can be judged"
                )
            raise Unsupported(
                "the program's recorded calls of the model's code do not match the test's"
            )
        self.position += 1
        return event

    def get(self, number: int, attr: str, of: str = "object") -> Any:
        return self._served(self._next("get", number, attr, of))

    def _served(self, event: dict[str, Any]) -> Any:
        """The value an event handed to the test, remembered by its number, then the changes
        model code made since to values handed out before."""
        value = self.value(event.get("r"))
        if type(event.get("n")) is int:
            self.returned[event["n"]] = value
        while self.position < len(self.events) and self.events[self.position]["e"] == "change":
            self._change(self.events[self.position])
            self.position += 1
        return value

    def _change(self, event: dict[str, Any]) -> None:
        """Model code changed, in place, an array it had handed to the test (a reused buffer):
        the test's copy changes too, as the official test's object would."""
        target = self.returned.get(event.get("n"))
        path = event.get("path")
        if not isinstance(path, list) or len(path) > 1:
            raise RecordError("malformed change event")
        for index in path:
            if type(index) is not int or type(target) not in (tuple, list):
                raise RecordError("malformed change event")
            target = target[index] if 0 <= index < len(target) else None
        _mirror(target, self.value(event.get("r")))

    def call(self, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        event = self._next("call", number)
        for key, form in (event.get("mut") or {}).items():
            target = kwargs.get(key) if not key.isdigit() else _at(args, int(key))
            _mirror(target, self.value(form))
        self.set_rngs(event.get("rng"))
        if "raise" in event:
            raised = event["raise"]
            if not isinstance(raised, list) or len(raised) != 2:
                raise RecordError("malformed raise event")
            raise _exception(*raised)
        return self._served(event)

    def set_rngs(self, states: Any) -> None:
        """Install the random generators' state the sandbox recorded, all of it checked first
        (``GENERATORS``): a state the model's code chose must not crash the harness."""
        if states is None:
            return
        if not isinstance(states, dict):
            raise RecordError("malformed random state: not a mapping of generators")
        checked = []
        for name, form in states.items():
            if name not in GENERATORS:
                raise RecordError(f"malformed random state: unknown generator {str(name)[:40]!r}")
            checked.append((name, GENERATORS[name][0](self.value(form))))
        for name, state in checked:
            GENERATORS[name][1](state)

    def bind(self, namespace: dict[str, Any], reserved: set[str]) -> None:
        """Bind the model's names that the tests use (never a trusted name)."""
        while self.position < len(self.events):
            event = self.events[self.position]
            self.position += 1
            if event["e"] == "armed":
                return
            if event["e"] != "bind":
                break
            name = event.get("name")
            trusted = not isinstance(name, str) or name in reserved or name.startswith("__")
            if not trusted and name.isidentifier():
                namespace[name] = self.value(event.get("r"))
        raise Stopped("the program stopped before its tests", before_tests=True)

    def begin(self, test: int) -> None:
        event = self._through("begin", test, f"the program stopped before test {test + 1}")
        self.set_rngs(event.get("rng"))

    def end(self, test: int) -> None:
        """Skip what this test did not ask for (a short-circuited ``and``) up to its end."""
        self._through("end", test, f"the program stopped before test {test + 1} finished")

    def _through(self, kind: str, test: int, missing: str) -> dict[str, Any]:
        """The next ``kind`` event of ``test``, the changes on the way applied; ``Stopped``
        with ``missing`` when the records end first."""
        while self.position < len(self.events):
            event = self.events[self.position]
            self.position += 1
            if event["e"] == "change":
                self._change(event)
            elif event["e"] == kind and event["t"] == test:
                return event
        raise Stopped(missing)


def _at(args: tuple[Any, ...], index: int) -> Any:
    return args[index] if index < len(args) else None


MT_WORDS = 624
"""Words of MT19937's state; its position in them runs from 0 to 624 (NumPy's and Python's)."""


def _words(words: Any, what: str) -> None:
    if any(type(w) is not int or not 0 <= w < 1 << 32 for w in words):
        raise RecordError(f"malformed random state: {what} are not 32-bit words")


def _numpy_state(state: Any) -> tuple[Any, ...]:
    """NumPy's legacy global state as ``numpy.random.get_state()`` gives it, or RecordError:
    NumPy does not check it, and a position past the key makes the next draw read outside it."""
    if type(state) is not tuple or len(state) != 5:
        raise RecordError("malformed random state: numpy's is not a tuple of 5")
    name, key, position, has_gauss, gauss = state
    if type(name) is not str or name != "MT19937":
        raise RecordError("malformed random state: numpy's generator is not MT19937")
    if type(key) is not numpy.ndarray or key.dtype.kind not in "iu" or key.shape != (MT_WORDS,):
        raise RecordError(f"malformed random state: numpy's key is not {MT_WORDS} integers")
    _words(key.tolist(), "numpy's key words")
    if type(position) is not int or not 0 <= position <= MT_WORDS:
        raise RecordError(f"malformed random state: numpy's position is not in 0..{MT_WORDS}")
    if type(has_gauss) is not int or has_gauss not in (0, 1):
        raise RecordError("malformed random state: numpy's has_gauss is not 0 or 1")
    if type(gauss) is not float or not math.isfinite(gauss):
        raise RecordError("malformed random state: numpy's cached gaussian is not a finite float")
    return name, key.astype(numpy.uint32), position, has_gauss, gauss


def _python_state(state: Any) -> tuple[Any, ...]:
    """Python's ``random`` state as ``random.getstate()`` gives it (version 3), or RecordError."""
    if type(state) is not tuple or len(state) != 3:
        raise RecordError("malformed random state: random's is not a tuple of 3")
    version, internal, gauss = state
    if type(version) is not int or version != 3:
        raise RecordError("malformed random state: random's version is not 3")
    if type(internal) is not tuple or len(internal) != MT_WORDS + 1:
        raise RecordError(f"malformed random state: random's is not {MT_WORDS + 1} integers")
    _words(internal[:MT_WORDS], "random's words")
    index = internal[MT_WORDS]
    if type(index) is not int or not 0 <= index <= MT_WORDS:
        raise RecordError(f"malformed random state: random's index is not in 0..{MT_WORDS}")
    if gauss is not None and (type(gauss) is not float or not math.isfinite(gauss)):
        raise RecordError("malformed random state: random's gauss_next is not a finite float")
    return state


GENERATORS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "numpy": (_numpy_state, numpy.random.set_state),
    "random": (_python_state, random.setstate),
}
"""The global generators a test may draw from: name -> (check a recorded state, install it).
A recorded state of any other generator is refused."""


def _mirror(target: Any, value: Any) -> None:
    """Apply an in-place change the model's function made to an argument of the test's."""
    if type(target) is numpy.ndarray and isinstance(value, numpy.ndarray):
        if target.shape == value.shape and target.flags.writeable:
            target[...] = value
    elif type(target) is list and isinstance(value, list):
        target[:] = value
    elif type(target) is dict and isinstance(value, dict):
        target.clear()
        target.update(value)


def _quiet_builtins() -> dict[str, Any]:
    names = dict(vars(builtins))
    names["print"] = lambda *args, **kwargs: None
    names["input"] = None
    return names


def _check(values: tuple[Any, ...], target: Any) -> None:
    """A zero-size value never matches a non-empty target (it would broadcast against it)."""
    plain = [v.plain() if type(v) is _Handle else v for v in values]
    if any(has_empty(v) for v in plain) and not has_empty(target):
        raise AssertionError("a zero-size value was compared with a non-empty target")


FAILURES = ("stopped", "exit", "unsupported", "record", "memory", "assertion", "exception")
MAX_MESSAGE = 1000


@dataclass(frozen=True)
class Failure:
    """Why a trusted test stopped, as plain data (it crosses from a worker process as JSON):
    its category (``FAILURES``), the exception's type name and message, and whether the program
    stopped before its tests began. The runner builds the step's reason from it."""

    category: str
    type: str
    message: str
    before_tests: bool = False


def _replayed(exc: BaseException) -> bool:
    """Raised by ``Replay.call`` as the model's own exception, not by the re-run itself."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is Replay.call.__code__


def failure_of(exc: BaseException) -> Failure:
    """What the runner needs of the exception that stopped a test: the exception itself stays in
    the worker (nothing but plain data crosses back)."""
    if isinstance(exc, Stopped):
        category = "stopped"
    elif isinstance(exc, ModelExit):
        category = "exit"
    elif isinstance(exc, Unsupported):
        category = "unsupported"
    elif isinstance(exc, RecordError):
        category = "record"
    elif isinstance(exc, MemoryError) and not _replayed(exc):
        category = "memory"
    elif isinstance(exc, AssertionError):
        category = "assertion"
    else:
        category = "exception"
    before = isinstance(exc, Stopped) and exc.before_tests
    return Failure(category, type(exc).__name__[:100], str(exc)[:MAX_MESSAGE], before)


@dataclass
class TestOutcome:
    """How one test went on the trusted side: passed, or why it stopped."""

    index: int
    error: Failure | None = None
    solved: dict[int, tuple[Any, ...]] = field(default_factory=dict)


@dataclass
class Replayed:
    """The trusted re-run of one step's tests: each test's outcome, or why the records could
    not be read."""

    outcomes: list[TestOutcome] | None = None
    records_error: str | None = None


def namespace_for(dependencies: str) -> tuple[dict[str, Any], set[str]]:
    """The trusted namespace a step's tests start from, and the names no record may bind."""
    namespace: dict[str, Any] = {"__builtins__": _quiet_builtins(), "__name__": "__main__"}
    for node in ast.parse(dependencies).body:
        try:
            # The problem's import lines, from the verified official files.
            code = compile(
                ast.Module([node], []), "<dependencies>", "exec"
            )  # inspect-evals-lint: ignore[host_code_execution] -- the problem's import lines (verified files)
            exec(code, namespace)  # inspect-evals-lint: ignore[host_code_execution] -- as above
        except ImportError:
            continue  # e.g. scipy.integrate.simps, gone from the harness's SciPy
    for name, value in list(namespace.items()):
        if value is numpy:
            namespace[name] = STRICT_NUMPY
    namespace.update(HELPERS)
    reserved = set(vars(builtins)) | set(HELPERS) | set(dependency_names(dependencies))
    reserved |= {TARGET, CHECK, SOLVE}
    return namespace, reserved


def replay_tests(
    plans: list[TestPlan],
    records: Records,
    dependencies: str,
    targets: list[Any] | None,
) -> list[TestOutcome]:
    """Run the tests in order on the records: judged against ``targets``, or, with no targets,
    solved (each assert's recorded values collected). Stops at the first failing test."""
    replay = Replay(records)
    namespace, reserved = namespace_for(dependencies)
    outcomes: list[TestOutcome] = []
    try:
        replay.bind(namespace, reserved)
    except (RecordError, Stopped) as exc:
        return [TestOutcome(plans[0].index if plans else 0, failure_of(exc))]
    for plan in plans:
        outcome = TestOutcome(plan.index)
        outcomes.append(outcome)
        solving = targets is None
        namespace[TARGET] = None if solving else targets[plan.index]
        namespace[CHECK] = _check
        namespace[SOLVE] = lambda number, values, found=outcome.solved: found.__setitem__(
            number, values
        )
        source = plan.solve if solving else plan.judge
        try:
            replay.begin(plan.index)
            code = compile(
                source, f"<test {plan.index + 1}>", "exec"
            )  # inspect-evals-lint: ignore[host_code_execution] -- the benchmark's test snippets (verified files), rewritten by rewrite.py; model output reaches them only as data decoded by wire.decode
            exec(
                code, namespace
            )  # inspect-evals-lint: ignore[host_code_execution] -- as above: benchmark code on decoded plain data
            replay.end(plan.index)
        except Exception as exc:  # noqa: BLE001 - any failure fails this test
            outcome.error = failure_of(exc)
            break
    return outcomes


def replay_job(
    path: str, plans: list[TestPlan], dependencies: str, targets: list[Any] | None
) -> dict[str, Any]:
    """The trusted re-run as a job of a trusted worker (``scievals.trusted``), so that its time
    and memory are bounded and a crash takes only the worker down: the raw records are parsed,
    decoded and replayed there. The answer is JSON-ready, solved values in the record format
    (``wire.encode``); ``read_replayed`` reads it back."""
    try:
        records = read_records(path)
    except RecordError as exc:
        return {"records_error": f"unreadable records: {exc}"}
    return {
        "outcomes": [_outcome_form(o) for o in replay_tests(plans, records, dependencies, targets)]
    }


def _outcome_form(outcome: TestOutcome) -> dict[str, Any]:
    error = outcome.error
    try:
        solved = [[number, encode(values)] for number, values in outcome.solved.items()]
    except (NotPlain, RecursionError):
        solved = []
        error = error or Failure("unsupported", "Unsupported", "a solved value is not plain data")
    return {"index": outcome.index, "error": error and asdict(error), "solved": solved}


def read_replayed(answer: Any) -> Replayed:
    """A ``replay_job`` answer, every field checked (it came from a worker process as JSON)."""
    try:
        if "records_error" in answer:
            return Replayed(records_error=str(answer["records_error"])[:MAX_MESSAGE])
        outcomes = []
        for form in answer["outcomes"]:
            index, error = form["index"], form["error"]
            if type(index) is not int:
                raise TypeError("index")
            failure = None
            if error is not None:
                failure = Failure(**error)
                strings = (failure.category, failure.type, failure.message)
                if failure.category not in FAILURES or not all(type(t) is str for t in strings):
                    raise TypeError("error")
                if type(failure.before_tests) is not bool:
                    raise TypeError("before_tests")
            solved = {}
            for number, values in form["solved"]:
                solved[int(number)] = tuple(decode(values))
            outcomes.append(TestOutcome(index, failure, solved))
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        raise RecordError(f"malformed answer from the trusted re-run: {str(exc)[:200]}") from exc
    return Replayed(outcomes)
