"""Values that are not plain data, through the real grader in both scoring runtimes.

What crosses the boundary is what the official test would have seen after the benchmark's own
operations: a subclass of a plain type as its base holds it (a namedtuple keeps its field names),
and any other object as the array NumPy makes of it, the items iterating it yields and its
length (``wire.view_form``). Honest code returning such values gets the official verdict
(``passes=True`` below; ``test_honest_corpus.py`` checks many more against the official runner);
values built to lie through these rules fail, with a reason that says what happened, and the run
finishes with every other verdict right.
"""

from __future__ import annotations

import re

from scievals.scicode.extract import header_name
from scievals.scicode.inside.wire import MAX_RECORD_BYTES

from .test_hostile_grading import (
    WRONG,
    Attack,
    AttackClass,
    check_attack,
    class_runs,  # noqa: F401 - the fixture: each class graded once per grader
    class_tests,
    code,
    gold_code,
    grader,  # noqa: F401 - the fixture: every case in both runtimes
    returning,
    returns,
    run_class,
)
from .test_hostile_grading import _steps as steps


def wrapping(step_id: str, body: str, prelude: str = "") -> str:
    """The step's gold code, its function wrapped so that it returns ``body`` of the gold result
    ``r`` (an honest answer in another type)."""
    name = header_name(steps()[step_id][1].function_header)
    inner = "\n".join("    " + line for line in code(body).splitlines())
    return (
        f"{code(prelude)}\n{gold_code(step_id)}\n_gold = {name}\n"
        f"def {name}(*args, **kwargs):\n    r = _gold(*args, **kwargs)\n{inner}"
    ).strip("\n")


LIARS = code(
    """
    import collections
    import numpy as np

    class LyingPair(collections.namedtuple("LyingPair", "a b")):
        '''A namedtuple whose own methods claim anything.'''
        def __eq__(self, other): return True
        def __iter__(self): return iter(getattr(self, "claim", ()))
        def __getitem__(self, i): return 0.0
        def __len__(self): return 2

    class LyingDict(collections.OrderedDict):
        def __eq__(self, other): return True
        def __getitem__(self, key): return 0.0
        def keys(self): return ()

    class UfuncLiar(np.ndarray):
        def __array_ufunc__(self, *args, **kwargs): return True
        def __eq__(self, other): return True

    class LyingLength(collections.deque):
        def __len__(self): return 10**9

    class Forever:
        def __iter__(self):
            while True:
                yield 1.0

    class HoldsItself:
        def __len__(self): return 1
        def __iter__(self): return iter([self])

    class Matryoshka:
        def __init__(self, depth=0): self.depth = depth
        def __len__(self): return 1
        def __iter__(self): return iter([Matryoshka(self.depth + 1)])

    class ArrayRaises:
        def __array__(self, dtype=None, copy=None): raise RuntimeError("no array")
        def __len__(self): raise RuntimeError("no length")
        def __iter__(self): raise RuntimeError("no items")

    class Fields(tuple):
        _fields = ("__class__", "__eq__")
    """
)
HONEST_TYPES = code(
    """
    import array
    import collections
    import dataclasses
    import os
    import tempfile

    import numpy as np

    @dataclasses.dataclass
    class WithArray:
        value: object
        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.value, dtype=dtype)

    class Result:
        def __init__(self, values): self.values = list(values)
        def __len__(self): return len(self.values)
        def __getitem__(self, i): return self.values[i]
        def __iter__(self): return iter(self.values)

    def memmapped(a):
        a = np.asarray(a)
        path = os.path.join(tempfile.mkdtemp(), "m.dat")
        m = np.memmap(path, dtype=a.dtype, mode="w+", shape=a.shape)
        m[...] = a
        return m
    """
)

VIEWS: list[Attack] = [
    # Honest values of other types: the official verdict (pass).
    Attack(
        "deque", "1.1", wrapping("1.1", "return collections.deque(r)", HONEST_TYPES), passes=True
    ),
    Attack(
        "array.array",
        "1.1",
        wrapping("1.1", "return array.array('d', r)", HONEST_TYPES),
        passes=True,
    ),
    Attack("memmap", "1.1", wrapping("1.1", "return memmapped(r)", HONEST_TYPES), passes=True),
    Attack(
        "unmasked-masked-array",
        "4.1",
        wrapping("4.1", "return np.ma.masked_array(r)", HONEST_TYPES),
        passes=True,
    ),
    Attack("result-class", "29.1", wrapping("29.1", "return Result(r)", HONEST_TYPES), passes=True),
    Attack(
        "dataclass-with-array",
        "3.1",
        wrapping("3.1", "return WithArray(r)", HONEST_TYPES),
        passes=True,
    ),
    Attack(
        "namedtuple",
        "3.1",
        wrapping("3.1", "return collections.namedtuple('GS', 'residual error')(*r)", HONEST_TYPES),
        passes=True,
    ),
    Attack(
        "typing-namedtuple",
        "3.1",
        wrapping(
            "3.1",
            "import typing\nclass GS(typing.NamedTuple):\n    residual: float\n    error: float\n"
            "return GS(*r)",
            HONEST_TYPES,
        ),
        passes=True,
    ),
    Attack(
        "list-subclass", "19.1", wrapping("19.1", "return type('L', (list,), {})(r)"), passes=True
    ),
    Attack(
        "deque-of-rows",
        "78.2",
        wrapping("78.2", "return collections.deque(r)", HONEST_TYPES),
        passes=True,
    ),
    Attack(
        "ordered-dict",
        "10.3",
        wrapping(
            "10.3",
            "return collections.OrderedDict(enumerate(r)) if isinstance(r, (list, tuple)) else r",
            HONEST_TYPES,
        ),
        passes=True,
    ),
    # Values built to lie through the same rules: they fail.
    returns("namedtuple-lies", "3.1", "return LyingPair(1.0, 1.0)", LIARS),
    returns("ordered-dict-lies", "29.2", "return LyingDict(a=1)", LIARS),
    returns("ndarray-ufunc-lies", "1.1", "return np.zeros(7).view(UfuncLiar)", LIARS),
    returns(
        "masked-entries-hide-wrong-data",
        "1.1",
        "return np.ma.masked_array(np.zeros(7), mask=True)",
        LIARS,
    ),
    returns("length-lies", "29.1", "return LyingLength([0.0, 0.0])", LIARS),
    returns("endless-iterator", "1.1", "return Forever()", LIARS),
    returns("holds-itself", "19.2", "return HoldsItself()", LIARS),
    returns("nested-forever", "47.1", "return Matryoshka()", LIARS),
    returns("every-conversion-raises", "10.1", "return ArrayRaises()", LIARS),
    returns("dunder-fields", "3.1", "return Fields((1.0, 1.0))", LIARS),
    returns("empty-deque", "44.1", "import collections\nreturn collections.deque()"),
    returns(
        "deque-of-zero-size",
        "49.1",
        "import collections\nimport numpy as np\nreturn collections.deque([np.zeros((0, 3))])",
    ),
    returns("generator-of-wrong", "38.1", "return (x for x in [0.0, 0.0, 0.0])"),
]


VIEWS_CLASS = AttackClass(
    "views",
    VIEWS,
    "values of other types (views, iterators, containers, sparse matrices, numpy scalars) must "
    "get the official verdict: a wrong one fails, a right one passes",
)
test_attack_fails_its_own_step, test_class_runs_clean = class_tests([VIEWS_CLASS])


def test_reasons_say_what_happened(class_runs):  # noqa: F811 - the imported fixture
    """A value NumPy cannot make a plain array of is named as such, never as records that do
    not match the test."""
    run = class_runs(VIEWS_CLASS)
    verdicts = {a.name: run.verdict(a)[0] for a in VIEWS if not a.passes}
    for name in ("endless-iterator", "every-conversion-raises"):
        reason = verdicts[name]["reason"]
        assert "do not match" not in reason, reason
        assert re.search(r"Forever|ArrayRaises", reason), reason


def test_values_over_the_records_bound_fail_naming_it(grader):  # noqa: F811
    """A step whose returned values exceed the records' bound fails as ``too_large`` with the
    bound in its reason; the gold step beside it passes."""
    items = MAX_RECORD_BYTES // 8 + 1
    big = returning("1.1", f"import numpy as np\nreturn np.ones({items})")
    completions = {
        "1.1": "```python\n" + big + "\n```",
        "38.1": "```python\n" + gold_code("38.1") + "\n```",
    }
    outcome = grader.grade(completions, timeout=120)
    verdict = outcome.verdicts["1.1"]
    assert verdict["reason_kind"] == "too_large", verdict
    assert f"{MAX_RECORD_BYTES >> 20} MiB" in verdict["reason"], verdict
    assert outcome.verdicts["38.1"]["passed"] is True


def test_wrong_answers_stay_wrong_in_other_types(grader):  # noqa: F811
    """The same wrong answers as plain values, wrapped in deques and namedtuples, still fail."""
    attacks = [
        Attack("wrong-in-deque", s, WRONG[s] + "\n" + wrap)
        for s, wrap in (
            (
                "1.1",
                "import collections\n_w = cg\ndef cg(*a):\n    return collections.deque(_w(*a))",
            ),
            (
                "29.3",
                "import collections\n_w = orthogonalize\ndef orthogonalize(*a):\n    return collections.deque(_w(*a))",
            ),
        )
    ]
    run = run_class(grader, attacks)
    for attack in attacks:
        check_attack(run, attack)
