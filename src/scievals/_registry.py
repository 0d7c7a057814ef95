"""What Inspect discovers through the ``inspect_ai`` entry point: tasks, model APIs, sandboxes."""

from scievals.models import scievals_model  # noqa: F401
from scievals.sandbox.provider import ScievalsSandbox  # noqa: F401
from scievals.scibench.task import scibench  # noqa: F401
from scievals.scicode.task import scicode  # noqa: F401
