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

    import numpy

    encode, not_plain = wire["encode"], wire["NotPlain"]
    out = open(path, "w", encoding="utf-8")  # noqa: SIM115 - open for the program's life
    main = sys.modules["__main__"].__dict__
    pristine = {}
    saved_modules = []
    registry = {}
    views = {}
    handles = []

    def write(event):
        out.write(json.dumps(event) + "\n")
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
            return {"handle": proxy._h}

        try:
            form = encode(value, other)
        except not_plain:
            proxy = new_handle(value)
            return {"handle": proxy._h}, proxy
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
        return view

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
        write(event)

    def same_state(a, b):
        if type(a) is tuple and type(b) is tuple and len(a) == len(b):
            return all(same_state(x, y) for x, y in zip(a, b, strict=True))
        if type(a) is numpy.ndarray:
            return type(b) is numpy.ndarray and numpy.array_equal(a, b)
        return a == b

    class Proxy:
        """What the tests hold for a model object: reads and calls are recorded."""

        __slots__ = ("_o", "_h")

        def __init__(self, obj, number):
            object.__setattr__(self, "_o", obj)
            object.__setattr__(self, "_h", number)

        def __getattr__(self, attr):
            obj = object.__getattribute__(self, "_o")
            number = object.__getattribute__(self, "_h")
            value = getattr(obj, attr)
            form, view = encoded(value)
            write({"e": "get", "h": number, "attr": attr, "r": form})
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
        if name in registry and value is registry[name]:
            return views[name]
        return value

    def begin(test):
        restore()
        write({"e": "begin", "t": test, "rng": {k: encode(v) for k, v in rng_state().items()}})

    def end(test):
        write({"e": "end", "t": test})

    class Hooks:
        pass

    hooks = Hooks()
    for fn in (snapshot, arm, ref, trusted, begin, end):
        setattr(hooks, fn.__name__, fn)
    return hooks
