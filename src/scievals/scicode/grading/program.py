"""A step's program as the sandbox runs it: the official layout around our recorder.

Official layout (spec §4): the problem's dependencies, the code of every earlier step, this
step's code, then the tests. Ours adds the recorder before it (``inside/recorder.py``, with the
record format ``inside/wire.py`` and the comparison helpers ``inside/compare.py``, shipped as
their source by ``scievals.shipped``), a
snapshot of the dependencies' names before any model code runs, and, after the model's code,
the binding of the names the tests use. The tests themselves are their sandboxed halves
(``rewrite.py``): no target and no assert ever runs here.
"""

from __future__ import annotations

from functools import cache

from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.grading.rewrite import (
    HOOKS,
    TestPlan,
    child_tests,
    dependency_names,
    plan_test,
)
from scievals.shipped import SCICODE, source

# Gold code that times its own runs (78.3) would make regenerated targets machine-dependent; a
# clock that advances one millisecond per call makes every such choice reproducible.
STEADY_CLOCK = (
    "import time as __scievals_time__\n"
    "__scievals_ticks__ = [0.0]\n"
    "def __scievals_tick__():\n"
    "    __scievals_ticks__[0] += 0.001\n"
    "    return __scievals_ticks__[0]\n"
    "__scievals_time__.time = __scievals_tick__\n"
)


@cache
def _shipped_sources() -> str:
    """The recorder's sources as one assignment (the same text for every step program)."""
    return (
        "WIRE, COMPARE, RECORDER = "
        f"{source(SCICODE, 'wire')!r}, {source(SCICODE, 'compare')!r}, "
        f"{source(SCICODE, 'recorder')!r}\n"
    )


def recorder_prelude(record_path: str) -> str:
    """The code that installs the recorder, writing events to ``record_path`` (relative)."""
    return (
        "def __scievals_boot__():\n"
        "    spaces = {}\n"
        "    for name, source in (('wire', WIRE), ('compare', COMPARE), ('recorder', RECORDER)):\n"
        "        spaces[name] = {'__name__': 'scievals_' + name}\n"
        "        exec(compile(source, '<scievals ' + name + '>', 'exec'), spaces[name])\n"
        "    return spaces['recorder']['install'](\n"
        f"        {record_path!r}, spaces['wire'], spaces['compare']['HELPERS'])\n"
        f"{_shipped_sources()}"
        f"{HOOKS} = __scievals_boot__()\n"
        "del __scievals_boot__, WIRE, COMPARE, RECORDER\n"
    )


def plans_for(problem: Problem, step: Step) -> list[TestPlan]:
    return [plan_test(i, test, problem.dependencies) for i, test in enumerate(step.tests)]


def step_program(
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    plans: list[TestPlan],
    record_path: str,
    prelude: str = "",
) -> str:
    """The program for ``step``: ``codes`` holds the code used for it and every earlier step."""
    previous = "\n".join(codes.get(s.step_id, "") for s in problem.earlier(step))
    names = sorted({name for plan in plans for name in plan.names})
    deps = sorted(dependency_names(problem.dependencies))
    return (
        f"{recorder_prelude(record_path)}{prelude}{problem.dependencies}\n"
        f"{HOOKS}.snapshot({deps!r})\n"
        f"{previous}\n\n{codes.get(step.step_id, '')}\n\n"
        f"{HOOKS}.arm({names!r})\n"
        f"{child_tests(plans)}\n"
    )
