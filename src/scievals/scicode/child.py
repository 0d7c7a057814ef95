"""The code that runs inside the sandbox before a step program: the value recorder.

It is shipped as source text (``RECORDER_SOURCE``) and never imported by the harness. The
rewritten tests call ``__scievals_record__`` with the values they would have compared with
``target``; values are written as JSON lines with arrays as raw bytes, so the trusted side can
decode them without pickle. Before each test, builtins, ``math`` and every numpy module are put
back as they were before the model's code ran, so a patched ``np.allclose`` (or anything it calls)
cannot pass a self-checking test. A test counts as finished only when its ``done`` marker is
called from the program's own module code at the line where the harness placed it, so model code
cannot mark tests finished and exit early.
"""

RECORDER_SOURCE = r"""
def __scievals_install__(path, done_lines):
    import base64, builtins, json, math, sys
    import numpy
    out = open(path, "w", encoding="utf-8")
    frame_of = sys._getframe
    main_code = frame_of(1).f_code
    modules = [builtins, math] + [m for n, m in list(sys.modules.items())
                                  if m is not None and (n == "numpy" or n.startswith("numpy."))]
    pristine = [(vars(m), dict(vars(m))) for m in modules]

    def restore():
        for current, saved in pristine:
            for name, value in saved.items():
                if current.get(name) is not value:
                    current[name] = value

    def b64(raw):
        return base64.b64encode(raw).decode("ascii")

    def encode(value, depth=0):
        if depth > 64:
            raise ValueError("value nested too deeply to record")
        kind = type(value)
        if value is None or kind in (bool, int, str):
            return value
        if kind is float:
            return {"float": repr(value)}
        if isinstance(value, numpy.generic):
            if value.dtype.kind in "biufcUSmM":
                return {"npscalar": value.dtype.str, "b64": b64(value.tobytes())}
            return encode(value.item(), depth + 1)
        if isinstance(value, numpy.ndarray):
            if value.dtype.kind in "biufcUSmM":
                return {"ndarray": value.dtype.str, "shape": list(value.shape), "b64": b64(value.tobytes(order="C"))}
            return {"objarray": list(value.shape), "items": [encode(x, depth + 1) for x in value.ravel()]}
        if kind is complex:
            return {"complex": [repr(value.real), repr(value.imag)]}
        if kind is tuple or kind is list:
            return {kind.__name__: [encode(x, depth + 1) for x in value]}
        if kind is dict:
            return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
        if kind is bytes:
            return {"bytes": b64(value)}
        module = getattr(kind, "__module__", "") or ""
        if module.startswith("scipy.sparse") and hasattr(value, "tocoo"):
            coo = value.tocoo()
            return {"sparse": value.format, "class": kind.__name__, "shape": list(coo.shape),
                    "row": encode(numpy.asarray(coo.row), depth + 1),
                    "col": encode(numpy.asarray(coo.col), depth + 1),
                    "data": encode(numpy.asarray(coo.data), depth + 1)}
        if module.startswith("sympy"):
            return {"sympy": kind.__name__, "text": str(value)}
        for base in (bool, int, float, complex, str, tuple, list, dict):
            if isinstance(value, base):
                return encode(base(value), depth + 1)
        array = numpy.asarray(value)
        if array.dtype.kind in "biufc":
            return {"coerced": kind.__name__, "value": encode(array, depth + 1)}
        raise TypeError("cannot record a value of type " + kind.__name__)

    def write(record):
        out.write(json.dumps(record) + "\n")
        out.flush()

    def begin(test):
        restore()
        write({"test": test, "event": "begin"})

    def record(test, check, values):
        try:
            encoded = [encode(v) for v in values]
        except Exception as exc:
            write({"test": test, "check": check, "error": type(exc).__name__ + ": " + str(exc)})
        else:
            write({"test": test, "check": check, "values": encoded})

    def done(test):
        caller = frame_of(1)
        if caller.f_code is main_code and caller.f_lineno == done_lines.get(test):
            write({"test": test, "event": "done"})

    return record, begin, done


__scievals_record__, __scievals_begin__, __scievals_done__ = __scievals_install__({path!r}, {done_lines!r})
del __scievals_install__
"""


def recorder(path: str, done_lines: dict[int, int] | None = None) -> str:
    """The recorder prelude, writing to ``path`` (relative to the sandbox cwd); ``done_lines``
    maps each test to the program line of its ``done`` marker (none given: nothing finishes)."""
    return RECORDER_SOURCE.replace("{path!r}", repr(path)).replace(
        "{done_lines!r}", repr(done_lines or {})
    )
