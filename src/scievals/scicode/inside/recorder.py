"""The sandboxed half of a step program: it records what the model's code hands to the tests.

This file is shipped as source into every step program (see ``program.py``) and runs under the
runtime's interpreter; the harness never imports it. The rewritten tests (``rewrite.py``) reach
every name the model defined through ``ref``: a function, class or other object becomes a
*handle*, and each call of it, and each attribute read from what it returned, is written to the
records file as an event carrying the plain value that came back (``wire.encode``), the
arguments it changed in place, and the random generators' state after it. The events are those
of ``events.py`` and the value forms those of ``wire.py``, and nothing else.

Nothing here is trusted: model code runs in the same process and can rewrite any of it, forge
events or exit early. That is why the events hold only what the model's code returned, which it
decides anyway, and never a verdict: the trusted side re-runs the benchmark's tests itself on
these values (``replay.py``). Restoring the standard modules before each test only keeps the
tests' own computations here close to the trusted side's, so that the model's functions get the
arguments the tests meant to give them.
"""

import builtins
import json
import math
import random
import sys
import zlib

import numpy


def install(path, wire, helpers):
    """The recorder of this program, writing to ``path``; the rewritten tests call its hooks
    (``snapshot``, ``arm``, ``ref``, ``claim``, ``trusted``, ``begin``, ``end``)."""
    return Recorder(path, wire, helpers, sys.modules["__main__"].__dict__)


class Recorder:
    """The program's records and what it needs to write them: the file and its byte count,
    the handles it gave out, the arrays it watches for later changes, and the pristine names
    (builtins, helpers, dependencies) the tests must see whatever model code rebinds."""

    def __init__(self, path, wire, helpers, main):
        self.wire = wire
        self.encode, self.not_plain = wire["encode"], wire["NotPlain"]
        self.bound = wire["MAX_RECORD_BYTES"] - (1 << 16)
        self.out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - open for the program's life
        self.written = 0
        self.served = 0
        """Events that handed a value to the test so far (each one's number, ``n``)."""
        self.viewing = set()
        self.watched = []
        self.helpers = helpers
        self.main = main
        self.pristine = {}
        self.saved_modules = []
        self.registry = {}
        self.views = {}
        self.handles = []
        self.claimed = set()
        """Globals the test bound itself (``claim``): its own from then on."""

    # ---- writing ---------------------------------------------------------------------------

    def write(self, event):
        """One event; past the records' bound, one ``too_large`` event and nothing more."""

        if self.written > self.bound:
            return
        line = json.dumps(event) + "\n"
        self.written += len(line)
        if self.written > self.bound:
            line = json.dumps({"e": "too_large", "bytes": self.written}) + "\n"
        self.out.write(line)
        self.out.flush()

    def rng_state(self):

        return {"numpy": numpy.random.get_state(), "random": random.getstate()}

    def rng_forms(self):
        return {k: self.encode(v) for k, v in self.rng_state().items()}

    # ---- the hooks the program calls --------------------------------------------------------

    def snapshot(self, names):
        """After the dependencies, before any model code: what the tests must see."""
        self.pristine.update(vars(builtins))
        self.pristine.update(self.helpers)
        self.pristine.update({name: self.main[name] for name in names if name in self.main})
        modules = [builtins, math, random] + [
            m
            for n, m in list(sys.modules.items())
            if m is not None and (n == "numpy" or n.startswith("numpy."))
        ]
        self.saved_modules.extend((vars(m), dict(vars(m))) for m in modules)

    def arm(self, names):
        """After the model's code: bind what the tests will use of it."""
        for name in names:
            if name in self.main:
                self.registry[name] = self.main[name]
                form, self.views[name] = self.encoded(self.main[name])
                self.write({"e": "bind", "name": name, "r": form})
        self.write({"e": "armed"})

    def ref(self, name, value):
        if name in self.registry and name not in self.claimed and value is self.registry[name]:
            return self.views[name]
        return value

    def claim(self, names):
        """The test bound these globals itself: from now on they are the test's, not the
        model's (its ``import itertools`` is the real module on the trusted side too)."""
        self.claimed.update(names)

    def trusted(self, name):
        if name in self.claimed and name in self.main:
            return self.main[name]
        if name not in self.pristine:
            raise NameError(f"name {name!r} is not defined")
        return self.pristine[name]

    def begin(self, test):
        for current, saved in self.saved_modules:
            for name, value in saved.items():
                if current.get(name) is not value:
                    current[name] = value
        self.write({"e": "begin", "t": test, "rng": self.rng_forms()})

    def end(self, test):
        self.changes()
        self.write({"e": "end", "t": test})

    # ---- values ----------------------------------------------------------------------------

    def new_handle(self, obj):
        self.handles.append(Proxy(obj, len(self.handles), self))
        return self.handles[-1]

    def encoded(self, value):
        """The value's record form and what the test gets: the value, or proxies for handles."""
        made = {}

        def other(obj):
            proxy = self.new_handle(obj)
            made[id(obj)] = proxy
            form = {"handle": proxy._h, "type": type(obj).__name__[:128]}
            if id(obj) in self.viewing or len(self.viewing) > 8:
                return form  # an object whose items hold itself, or nested too deeply
            self.viewing.add(id(obj))
            try:
                view, kept = self.wire["view_form"](obj, other, 0)
            finally:
                self.viewing.discard(id(obj))
            if view is not None:
                form["view"] = view
            if kept is not None:
                what, data = kept
                rebuilt = [rebuild(x, made) for x in data] if what == "items" else data
                object.__setattr__(proxy, "_v", (what, rebuilt))
            return form

        try:
            form = self.encode(value, other)
        except self.not_plain:
            proxy = self.new_handle(value)
            return {"handle": proxy._h, "type": type(value).__name__[:128]}, proxy
        return form, (rebuild(value, made) if made else value)

    def state_of(self, value):

        if type(value) is numpy.ndarray:
            return value.copy()
        if type(value) in (list, dict):
            try:
                return self.encode(value)
            except (self.not_plain, RecursionError):
                return None
        return None

    def changed(self, before, value):

        if before is None:
            return False
        if type(value) is numpy.ndarray:
            return before.shape != value.shape or before.tobytes() != value.tobytes()
        try:
            return self.encode(value) != before
        except (self.not_plain, RecursionError):
            return False

    # ---- calls and reads of the model's objects ---------------------------------------------

    def call(self, handle, fn, args, kwargs):
        real_args = [unwrap(a) for a in args]
        real_kwargs = {k: unwrap(v) for k, v in kwargs.items()}
        before = [self.state_of(a) for a in real_args]
        before_kw = {k: self.state_of(v) for k, v in real_kwargs.items()}
        rngs = self.rng_state()
        event = {"e": "call", "h": handle}
        try:
            result = fn(*real_args, **real_kwargs)
        except BaseException as exc:
            event["raise"] = [type(exc).__name__, str(exc)[:300]]
            self.finish(event, (real_args, before, real_kwargs, before_kw), rngs)
            raise
        event["r"], view = self.encoded(result)
        self.finish(event, (real_args, before, real_kwargs, before_kw), rngs)
        self.serve(event, result)
        return view

    def read(self, handle, obj, attr):
        value = getattr(obj, attr)
        form, view = self.encoded(value)
        self.served += 1
        event = {"e": "get", "h": handle, "attr": attr, "r": form, "n": self.served}
        self.write(event)
        self.serve(event, value)
        return view

    def finish(self, event, arguments, rngs):
        """The call's event, with the arguments it changed in place and the generators moved."""
        args, before, kwargs, before_kw = arguments
        mutated = {}
        for i, (value, old) in enumerate(zip(args, before, strict=True)):
            if self.changed(old, value):
                mutated[str(i)] = self.encoded(value)[0]
        for key, value in kwargs.items():
            if self.changed(before_kw[key], value):
                mutated[key] = self.encoded(value)[0]
        if mutated:
            event["mut"] = mutated
        after = self.rng_state()
        moved = {k: self.encode(v) for k, v in after.items() if not same_state(rngs[k], v)}
        if moved:
            event["rng"] = moved
        self.served += 1
        event["n"] = self.served
        self.write(event)

    def serve(self, event, value):
        """After a value went to the test: what model code changed since in values it handed
        out before (a reused buffer: the official test sees the change), then keep watch on
        this one's arrays."""

        self.changes()
        parts = [((), value)]
        if type(value) in (tuple, list):
            parts += [((i,), x) for i, x in enumerate(value[:64])]
        for path, part in parts:
            if isinstance(part, numpy.ndarray) and part.dtype.kind in self.wire["SAFE_KINDS"]:
                self.watched.append([event["n"], list(path), part, digest(part)])
        while len(self.watched) > 64 or sum(w[2].nbytes for w in self.watched) > 256 << 20:
            self.watched.pop(0)

    def changes(self):
        for entry in self.watched:
            now = digest(entry[2])
            if now != entry[3]:
                entry[3] = now
                r = self.encode(entry[2])
                self.write({"e": "change", "n": entry[0], "path": entry[1], "r": r})


def rebuild(value, made):
    if id(value) in made:
        return made[id(value)]
    if type(value) in (tuple, list):
        return type(value)(rebuild(x, made) for x in value)
    if type(value) is dict:
        return {k: rebuild(v, made) for k, v in value.items()}
    return value


def unwrap(value):
    if type(value) is Proxy:
        return object.__getattribute__(value, "_o")
    if type(value) in (tuple, list) and any(type(x) is Proxy for x in value):
        return type(value)(unwrap(x) for x in value)
    return value


def same_state(a, b):

    if type(a) is tuple and type(b) is tuple and len(a) == len(b):
        return all(same_state(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is numpy.ndarray:
        return type(b) is numpy.ndarray and numpy.array_equal(a, b)
    return a == b


def digest(array):

    data = numpy.ascontiguousarray(numpy.ndarray.view(array, numpy.ndarray)).data
    return array.shape, array.dtype.str, zlib.crc32(data)


class Proxy:
    """What the tests hold for a model object: reads and calls are recorded; its length,
    items, array and the array's shape and dtype are what was recorded of it
    (``wire.view_form``), exactly as the trusted side answers them (``replay._Handle``)."""

    __slots__ = ("_o", "_h", "_v", "_r")

    def __init__(self, obj, number, recorder):
        object.__setattr__(self, "_o", obj)
        object.__setattr__(self, "_h", number)
        object.__setattr__(self, "_v", None)
        object.__setattr__(self, "_r", recorder)

    def __len__(self):
        kept = object.__getattribute__(self, "_v")
        if kept:
            return len(kept[1])
        return len(object.__getattribute__(self, "_o"))

    def __iter__(self):
        kept, obj = object.__getattribute__(self, "_v"), object.__getattribute__(self, "_o")
        if kept and (hasattr(type(obj), "__iter__") or hasattr(type(obj), "__getitem__")):
            return iter(kept[1])
        return iter(obj)

    def __getitem__(self, key):
        kept, obj = object.__getattribute__(self, "_v"), object.__getattribute__(self, "_o")
        indexable = hasattr(type(obj), "__getitem__")
        if kept and indexable and (kept[0] == "array" or type(key) in (int, slice)):
            return kept[1][key]
        return obj[key]

    def __array__(self, dtype=None, copy=None):

        kept = object.__getattribute__(self, "_v")
        data = kept[1] if kept else object.__getattribute__(self, "_o")
        array = numpy.asarray(data)
        return array if dtype is None else array.astype(dtype)

    def __getattr__(self, attr):
        kept = object.__getattribute__(self, "_v")
        recorder = object.__getattribute__(self, "_r")
        if kept and kept[0] == "array" and attr in recorder.wire["ARRAY_PROBES"]:
            return getattr(kept[1], attr)
        obj = object.__getattribute__(self, "_o")
        return recorder.read(object.__getattribute__(self, "_h"), obj, attr)

    def __setattr__(self, attr, value):
        setattr(object.__getattribute__(self, "_o"), attr, unwrap(value))

    def __call__(self, *args, **kwargs):
        obj = object.__getattribute__(self, "_o")
        recorder = object.__getattribute__(self, "_r")
        return recorder.call(object.__getattribute__(self, "_h"), obj, args, kwargs)
