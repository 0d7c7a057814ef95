"""The one loader of the programs that run inside a scoring runtime or a container.

They live in the ``inside`` packages and import only the standard library and the scoring
libraries, never scievals (``tests/test_layers.py``): inside there is no scievals to import them
from, so they travel as their source text, read here, and run there under names of their own.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

SANDBOX = "scievals.sandbox.inside"
"""The sandbox's programs: zygote, container runner, tail runner."""
SCICODE = "scievals.scicode.inside"
"""SciCode's grading: the recorder, and the record format and comparison helpers it shares with the
trusted side."""
INSIDE = (SANDBOX, SCICODE)


@cache
def source(package: str, name: str) -> str:
    """The source of the inside program ``name`` of ``package`` (one of ``INSIDE``)."""
    if package not in INSIDE:
        raise ValueError(f"{package} is not an inside package ({', '.join(INSIDE)})")
    return resources.files(package).joinpath(f"{name}.py").read_text("utf-8")
