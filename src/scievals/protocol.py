"""The protocol record every scievals task writes into its log, and the report reads back.

A score means little without how it was obtained, so each task puts one dict under
``Task.metadata["protocol"]``; the report groups and labels runs by it. Model, temperature and
epochs are not repeated here: Inspect records them in the log itself.
"""

from __future__ import annotations

from typing import Any

# Keys every benchmark fills in (None where a key does not apply), in the order reports show them.
PROTOCOL_KEYS = (
    "benchmark",  # "scicode" | "scibench"
    "preset",  # the published setup the run was built from (scievals.presets), or None
    "preset_fields",  # every field that preset sets, generation settings included
    "overridden",  # {parameter: value} the user gave over the preset's, or None
    "dataset",  # scicode: "original" | "verified" ; scibench: None
    "data_version",  # e.g. "scicode-69a8cfc" | "main" | "old"
    "split",  # scicode: test|dev|all ; scibench: textbook|multimodal|exam
    "steps_counted",  # scicode: 288 / 50 / 338 (by step_count) ; scibench: number of problems
    "step_count",  # scicode: official | inspect_evals | upstream | verified ; scibench: None
    "background",  # scicode: bool ; scibench: None
    "prompt",  # scicode: single_turn|chat (+ "gold previous steps") ; scibench: the setting
    "scorer",  # scicode: "sandboxed-records" ; scibench: faithful|robust|both
    "timeout",  # seconds per execution, or None
    "runtime",  # {package: version} of the first scoring runtime, or {}
    "runtimes",  # scicode: runtime names in the order tried (a step passes if any passes)
    "sandbox",  # isolation mode that ran model code, or None
    "memory_limit",  # memory of each program that ran model code, and why; None where unknown
    "agent",  # the agent answering each step ("react: python, bash, submit"), or None: one call
    "agent_limits",  # per step: messages, tokens, tool_calls, tool_timeout (s), time (s); or None
)


def protocol(benchmark: str, **fields: Any) -> dict[str, Any]:
    """A complete protocol dict: unknown keys are refused, missing ones are None."""
    unknown = set(fields) - set(PROTOCOL_KEYS)
    if unknown:
        raise ValueError(f"unknown protocol keys: {sorted(unknown)}")
    record: dict[str, Any] = {key: fields.get(key) for key in PROTOCOL_KEYS}
    record["benchmark"] = benchmark
    return record
