"""The sandboxed half of a step program: it records what the model's code hands to the tests.

This file is shipped as source into every step program (see ``program.py``) and runs under the
runtime's interpreter; the harness never imports it. The rewritten tests (``rewrite.py``) reach
every name the model defined through ``ref``: a function, class or other object becomes a
*handle*, and each call of it, and each attribute read from what it returned, is written to the
records file as an event carrying the plain value that came back (``wire.encode``), the
arguments it changed in place, and the random generators' state after it.

Nothing here is trusted: model code runs in the same process and can rewrite any of it, forge
events or exit early. That is why the events hold only what the model's code returned, which it
decides anyway, and never a verdict: the trusted side re-runs the benchmark's tests itself on
these values (``replay.py``). Restoring the standard modules before each test only keeps the
tests' own computations here close to the trusted side's, so that the model's functions get the
arguments the tests meant to give them.
"""


def install(path, wire, helpers):
    import builtins
    import json
    import math
    import random
    import sys
    import zlib

    import numpy

    encode, not_plain, view_form = wire["encode"], wire["NotPlain"], wire["view_form"]
    bound = wire["MAX_RECORD_BYTES"] - (1 << 16)
    out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - open for the program's life
    written = [0]
    viewing = set()
    served = [0]
    watched = []
    main = sys.modules["__main__"].__dict__
    pristine = {}
    saved_modules = []
    registry = {}
    views = {}
    handles = []
    claimed = set()

    def write(event):
        """One event; past the records' bound, one ``too_large`` event and nothing more."""
        if written[0] > bound:
            return
        line = json.dumps(event) + "\n"
        written[0] += len(line)
        if written[0] > bound:
            line = json.dumps({"e": "too_large", "bytes": written[0]}) + "\n"
        out.write(line)
        out.flush()

    def rng_state():
        return {"numpy": numpy.random.get_state(), "random": random.getstate()}

    def snapshot(names):
        """After the dependencies, before any model code: what the tests must see."""
        pristine.update(vars(builtins))
        pristine.update(helpers)
        pristine.update({name: main[name] for name in names if name in main})
        modules = [builtins, math, random] + [
            m
            for n, m in list(sys.modules.items())
            if m is not None and (n == "numpy" or n.startswith("numpy."))
        ]
        saved_modules.extend((vars(m), dict(vars(m))) for m in modules)

    def restore():
        for current, saved in saved_modules:
            for name, value in saved.items():
                if current.get(name) is not value:
                    current[name] = value

    def trusted(name):
        if name in claimed and name in main:
            return main[name]
        if name not in pristine:
            raise NameError(f"name {name!r} is not defined")
        return pristine[name]

    def new_handle(obj):
        handles.append(Proxy(obj, len(handles)))
        return handles[-1]

    def encoded(value):
        """The value's record form and what the test gets: the value, or proxies for handles."""
        made = {}

        def other(obj):
            proxy = new_handle(obj)
            made[id(obj)] = proxy
            form = {"handle": proxy._h, "type": type(obj).__name__[:128]}
            if id(obj) in viewing or len(viewing) > 8:
                return form  # an object whose items hold itself, or nested too deeply
            viewing.add(id(obj))
            try:
                view, kept = view_form(obj, other, 0)
            finally:
                viewing.discard(id(obj))
            if view is not None:
                form["view"] = view
            if kept is not None:
                what, data = kept
                object.__setattr__(
                    proxy,
                    "_v",
                    (what, [rebuild(x, made) for x in data] if what == "items" else data),
                )
            return form

        try:
            form = encode(value, other)
        except not_plain:
            proxy = new_handle(value)
            return {"handle": proxy._h, "type": type(value).__name__[:128]}, proxy
        return form, (rebuild(value, made) if made else value)

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

    def state_of(value):
        if type(value) is numpy.ndarray:
            return value.copy()
        if type(value) in (list, dict):
            try:
                return encode(value)
            except (not_plain, RecursionError):
                return None
        return None

    def changed(before, value):
        if before is None:
            return False
        if type(value) is numpy.ndarray:
            return before.shape != value.shape or before.tobytes() != value.tobytes()
        try:
            return encode(value) != before
        except (not_plain, RecursionError):
            return False

    def call(handle, fn, args, kwargs):
        real_args = [unwrap(a) for a in args]
        real_kwargs = {k: unwrap(v) for k, v in kwargs.items()}
        before = [state_of(a) for a in real_args]
        before_kw = {k: state_of(v) for k, v in real_kwargs.items()}
        rngs = rng_state()
        event = {"e": "call", "h": handle}
        try:
            result = fn(*real_args, **real_kwargs)
        except BaseException as exc:
            event["raise"] = [type(exc).__name__, str(exc)[:300]]
            finish(event, real_args, before, real_kwargs, before_kw, rngs)
            raise
        event["r"], view = encoded(result)
        finish(event, real_args, before, real_kwargs, before_kw, rngs)
        serve(event, result)
        return view

    def serve(event, value):
        """After a value went to the test: what model code changed since in values it handed
        out before (a reused buffer: the official test sees the change), then keep watch on
        this one's arrays."""
        changes()
        event_number = event.get("n")
        if event_number is None:
            return
        parts = [((), value)]
        if type(value) in (tuple, list):
            parts += [((i,), x) for i, x in enumerate(value[:64])]
        for path, part in parts:
            if isinstance(part, numpy.ndarray) and part.dtype.kind in wire["SAFE_KINDS"]:
                watched.append([event_number, list(path), part, digest(part)])
        while len(watched) > 64 or sum(w[2].nbytes for w in watched) > 256 << 20:
            watched.pop(0)

    def digest(array):
        data = numpy.ascontiguousarray(numpy.ndarray.view(array, numpy.ndarray)).data
        return array.shape, array.dtype.str, zlib.crc32(data)

    def changes():
        for entry in watched:
            now = digest(entry[2])
            if now != entry[3]:
                entry[3] = now
                write({"e": "change", "n": entry[0], "path": entry[1], "r": encode(entry[2])})

    def finish(event, args, before, kwargs, before_kw, rngs):
        mutated = {}
        for i, (value, old) in enumerate(zip(args, before, strict=True)):
            if changed(old, value):
                mutated[str(i)] = encoded(value)[0]
        for key, value in kwargs.items():
            if changed(before_kw[key], value):
                mutated[key] = encoded(value)[0]
        if mutated:
            event["mut"] = mutated
        after = rng_state()
        moved = {k: encode(v) for k, v in after.items() if not same_state(rngs[k], v)}
        if moved:
            event["rng"] = moved
        served[0] += 1
        event["n"] = served[0]
        write(event)

    def same_state(a, b):
        if type(a) is tuple and type(b) is tuple and len(a) == len(b):
            return all(same_state(x, y) for x, y in zip(a, b, strict=True))
        if type(a) is numpy.ndarray:
            return type(b) is numpy.ndarray and numpy.array_equal(a, b)
        return a == b

    class Proxy:
        """What the tests hold for a model object: reads and calls are recorded; its length,
        items and array are what was recorded of it (``wire.view_form``), as on the trusted side."""

        __slots__ = ("_o", "_h", "_v")

        def __init__(self, obj, number):
            object.__setattr__(self, "_o", obj)
            object.__setattr__(self, "_h", number)
            object.__setattr__(self, "_v", None)

        def __len__(self):
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
            obj = object.__getattribute__(self, "_o")
            number = object.__getattribute__(self, "_h")
            value = getattr(obj, attr)
            form, view = encoded(value)
            served[0] += 1
            event = {"e": "get", "h": number, "attr": attr, "r": form, "n": served[0]}
            write(event)
            serve(event, value)
            return view

        def __setattr__(self, attr, value):
            setattr(object.__getattribute__(self, "_o"), attr, unwrap(value))

        def __call__(self, *args, **kwargs):
            obj = object.__getattribute__(self, "_o")
            return call(object.__getattribute__(self, "_h"), obj, args, kwargs)

    def arm(names):
        """After the model's code: bind what the tests will use of it."""
        for name in names:
            if name in main:
                registry[name] = main[name]
                form, views[name] = encoded(main[name])
                write({"e": "bind", "name": name, "r": form})
        write({"e": "armed"})

    def ref(name, value):
        if name in registry and name not in claimed and value is registry[name]:
            return views[name]
        return value

    def claim(names):
        """The test bound these globals itself: from now on they are the test's, not the
        model's (its ``import itertools`` is the real module on the trusted side too)."""
        claimed.update(names)

    def begin(test):
        restore()
        write({"e": "begin", "t": test, "rng": {k: encode(v) for k, v in rng_state().items()}})

    def end(test):
        changes()
        write({"e": "end", "t": test})

    class Hooks:
        pass

    hooks = Hooks()
    for fn in (snapshot, arm, ref, claim, trusted, begin, end):
        setattr(hooks, fn.__name__, fn)
    return hooks
