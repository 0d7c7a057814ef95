"""The reference reply for a step: its gold code, wrapped as a model would reply with it."""

from __future__ import annotations

from scievals.scicode.data.dataset import Step


def gold_reply(step: Step) -> str | None:
    """What ``scievals/reference`` answers for ``step``; None where there is no gold (test)."""
    if not step.gold_code:
        return None
    return (
        f"Here is an implementation of step {step.step_id}.\n\n```python\n{step.gold_code}\n```\n"
    )
