"""The record contract (``wire.py``) against a hostile model, through the real grader.

Every class of the contract's door: objects whose own protocols disagree (a length, items, an
array, a shape or a dtype that lie about each other), such lies nested in plain values,
records the program rewrites so that their parts disagree with themselves, and dicts whose
keys all hash alike. Each attack fails its own step with a clear reason, every other verdict
of its run is right (gold bystanders pass), and the run ends within the hostile suite's bound.
Honest controls of the same shapes pass.
"""

from __future__ import annotations

from .test_hostile_grading import (
    Attack,
    AttackClass,
    class_runs,  # noqa: F401 - the fixture: each class graded once per grader
    class_tests,
    code,
    gold_code,
    grader,  # noqa: F401 - the fixture: every case in both runtimes
    returns,
)
from .test_hostile_views import wrapping

LIARS = code(
    """
    import numpy as np

    class Short:
        '''Its length says one thing, its items another.'''
        def __init__(self, items, claimed): self.items, self.claimed = list(items), claimed
        def __len__(self): return self.claimed
        def __iter__(self): return iter(self.items)

    class Indexed:
        '''No __iter__: iterated through __getitem__, which stops early.'''
        def __init__(self, items, claimed): self.items, self.claimed = list(items), claimed
        def __len__(self): return self.claimed
        def __getitem__(self, i):
            if i >= len(self.items): raise IndexError(i)
            return self.items[i]

    class ArrayOfOne:
        '''Its array holds one item, its length claims the target's.'''
        def __init__(self, item, claimed): self.item, self.claimed = item, claimed
        def __len__(self): return self.claimed
        def __array__(self, dtype=None, copy=None): return np.asarray([self.item], dtype=dtype)

    class ShapeLies:
        '''Iterates a part of the answer, claims the whole answer's shape and dtype.'''
        def __init__(self, rows, shape, dtype):
            self.rows, self.shape, self.dtype = list(rows), shape, dtype
        def __len__(self): return self.shape[0]
        def __iter__(self): return iter(self.rows)

    class KeysLie:
        '''A mapping whose keys, items and values disagree.'''
        def __init__(self, value): self.value = value
        def keys(self): return ["a", "b"]
        def __iter__(self): return iter(["a"])
        def __len__(self): return 2
        def __getitem__(self, key): return self.value
    """
)
HONEST = code(
    """
    class Items:
        def __init__(self, items): self.items = list(items)
        def __len__(self): return len(self.items)
        def __iter__(self): return iter(self.items)
    """
)


ATTACKS: list[Attack] = [
    # Lying lengths, items and arrays (70.6 returns [h2, h3, psi_list]; 10.7 a tuple).
    Attack("length-lies", "70.6", wrapping("70.6", "return Short(r[:1], len(r))", LIARS)),
    Attack("getitem-lies", "70.6", wrapping("70.6", "return Indexed(r[:1], len(r))", LIARS)),
    Attack("array-lies", "70.6", wrapping("70.6", "return ArrayOfOne(r[0], len(r))", LIARS)),
    Attack("iter-lies", "10.7", wrapping("10.7", "return Short(r[:1], len(r))", LIARS)),
    Attack(
        "shape-and-dtype-lie",
        "10.6",
        wrapping("10.6", "r = np.asarray(r)\nreturn ShapeLies(r[:1], r.shape, r.dtype)", LIARS),
    ),
    returns("keys-lie", "29.2", "return KeysLie(1.0)", LIARS),
    Attack(
        "lie-nested-in-a-list",
        "70.6",
        wrapping("70.6", "return [r[0], r[1], Short(r[2][:1], len(r[2]))]", LIARS),
    ),
    # Honest controls of the same shapes: the official verdict (pass).
    Attack("honest-items", "70.6", wrapping("70.6", "return Items(r)", HONEST), passes=True),
    Attack("honest-items-tuple", "10.7", wrapping("10.7", "return Items(r)", HONEST), passes=True),
]

REWRITE = code(
    """
    import atexit, base64, glob, json, struct

    def _rewrite():
        (path,) = glob.glob("scievals-records-*.jsonl")
        with open(path) as fh:
            events = [json.loads(line) for line in fh if line.strip()]
        call = next(e for e in events if e["e"] == "call")
        CHANGE
        with open(path, "w") as fh:
            fh.write("".join(json.dumps(e) + "\\n" for e in events))

    atexit.register(_rewrite)
    """
)
CHANGES = {
    "event-extra-field": 'call["verdict"] = "pass"',
    "event-number-missing": 'del call["n"]',
    "event-number-out-of-order": 'call["n"] = 7',
    "returns-and-raises": 'call["raise"] = ["ValueError", "x"]',
    "value-extra-field": 'call["r"]["len"] = 3',
    "value-of-two-kinds": 'call["r"]["list"] = []',
    "matrix-of-one-dimension": 'call["r"]["matrix"] = True',
    "shape-disagrees-with-bytes": 'call["r"]["shape"] = [2 * call["r"]["shape"][0]]',
    "test-begun-twice": 'events.insert(events.index(call), {"e": "begin", "t": 0, "rng": {}})',
    "change-of-an-event-never-served": (
        'events.insert(events.index(call) + 1, {"e": "change", "n": 99, "path": [], "r": 1})'
    ),
    "event-after-the-bound": 'events.insert(events.index(call), {"e": "too_large", "bytes": 1})',
    "bind-after-armed": (
        'events.insert(events.index(call), {"e": "bind", "name": "cg", "r": {"float": "1.0"}})'
    ),
}
"""Each rewrites the first call event of gold 1.1 (an array) as the program exits."""
M = "(2**61 - 1)"
COLLIDING = {
    "int": f"k * {M}",
    "tuple": f'{{"tuple": [k * {M}, "x"]}}',
    "complex": '{"complex": [repr(float(1000003 * (200_001 - k))), repr(float(k))]}',
    "numpy-complex128": (
        '{"npscalar": "<c16", "b64": base64.b64encode('
        'struct.pack("<dd", 1000003 * (200_001 - k), k)).decode()}'
    ),
    "int-and-tuple": f'k * {M} if k % 2 else {{"tuple": [k * {M}]}}',
}
"""Dict keys of the kinds whose hashes a program can make collide en masse: multiples of
2**61 - 1 all hash to 0, tuples of them alike, and complex a + bj with a + 1000003 b fixed.
(Floats cannot: at most about 20 finite floats share a hash; strings, bytes and Symbols hash
with the worker's own random seed.) A dict of 200,000 of them, forged into the records,
would take quadratic time to build."""
CHANGES |= {
    f"colliding-{kind}-keys": (
        f'call["r"] = {{"dict": [[{key}, {{"float": "1.0"}}] for k in range(1, 200_001)]}}'
    )
    for kind, key in COLLIDING.items()
}
FORGED = [
    Attack(
        f"forged-{name}",
        "1.1",
        f"{gold_code('1.1')}\n{REWRITE.replace('CHANGE', change)}",
        kind="invalid_record",
    )
    for name, change in CHANGES.items()
]
FORGED_CONTROL = Attack(
    "rewritten-unchanged",
    "1.1",
    f"{gold_code('1.1')}\n{REWRITE.replace('CHANGE', 'pass')}",
    passes=True,
)


def _names_the_collision(verdict: dict, outcome: object, attack: Attack) -> None:
    if attack.name.startswith("forged-colliding"):
        assert "share one hash" in verdict["reason"]


CLASSES = [
    AttackClass(
        "lies",
        ATTACKS,
        "objects whose length, items, iteration, array, shape or keys lie must fail their own "
        "step, and leave every other verdict right",
    ),
    AttackClass(
        "forged",
        [*FORGED, FORGED_CONTROL],
        "records that disagree with themselves must fail as invalid_record",
        size=1,
        check=_names_the_collision,
    ),
]
test_attack_fails_its_own_step, test_class_runs_clean = class_tests(CLASSES)
