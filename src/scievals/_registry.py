"""What Inspect discovers through the ``inspect_ai`` entry point: tasks, model APIs, sandboxes.

Importing the tasks registers their scorers, metrics and reducers as ``scievals/<name>``. A log
records a scorer by its name without the package (``scicode_scorer``), and ``inspect score LOG``
looks it up by that name alone, so each scorer is also registered under it.
"""

from collections.abc import Callable
from typing import Any

from inspect_ai._util.registry import (  # inspect-evals-lint: ignore[IECQ001] -- no public API registers a bare name
    registry_add,
)
from inspect_ai.scorer import Scorer
from inspect_ai.util import RegistryInfo, registry_info

from scievals.models import scievals_model  # noqa: F401
from scievals.sandbox import (
    ScievalsSandbox,  # noqa: F401
    SharedContainer,  # noqa: F401
)
from scievals.scibench import (
    faithful,
    robust,
    scibench,  # noqa: F401
)
from scievals.scicode import scicode, scicode_scorer, scicode_verified  # noqa: F401


def _register_log_name(factory: Callable[..., Scorer]) -> None:
    info = registry_info(factory)

    def create(**params: Any) -> Scorer:
        return factory(**params)

    name = info.name.split("/", 1)[-1]
    registry_add(create, RegistryInfo(type="scorer", name=name, metadata=info.metadata))


_register_log_name(scicode_scorer)
_register_log_name(faithful)
_register_log_name(robust)
