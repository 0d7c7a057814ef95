"""Every SciBench preset end to end, offline, on all its data (the copy beside the repository),
with the reference and a mock model: the log's protocol holds the preset's name and every field
it sets, and the reference scores as the gold does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog

from scievals.presets import Preset, spelled
from scievals.report.load import run_from_log
from scievals.scibench.dataset import BOOKS
from scievals.scibench.presets import PRESETS

from .scibench_helpers import DATA

pytestmark = pytest.mark.skipif(
    not (DATA / "old" / "dataset").is_dir(), reason=f"no SciBench data at {DATA}"
)


def _shown(log: EvalLog, field: str, value: Any) -> bool:
    protocol = log.eval.metadata["protocol"]  # type: ignore[index]
    run = run_from_log(log)  # generation settings as the report reads them
    books = log.eval.metadata["books"]  # type: ignore[index]
    where = {
        "version": lambda: protocol["data_version"].split(" (")[0],
        "books": lambda: "all" if tuple(books) == BOOKS else ",".join(books),
        "setting": lambda: protocol["prompt"].split(" (")[0],
        "shots": lambda: protocol["prompt"].split("(")[1].split(" shots")[0],
        "subset": lambda: protocol["split"],
        "scorer": lambda: protocol["scorer"].split(" + ")[0],
        "errata": lambda: "+ errata" in protocol["scorer"],
        "abs_tol": lambda: (
            float(protocol["scorer"].split("abs_tol ")[1])
            if "abs_tol" in protocol["scorer"]
            else 0.0
        ),
        "timeout": lambda: protocol["timeout"],
        "temperature": lambda: run.temperature,
        "max_tokens": lambda: run.max_tokens,
        "epochs": lambda: log.eval.config.epochs,
    }
    return spelled(where[field]()) == spelled(value)


LIMIT = 40
"""Problems each preset runs (the first ones of its data): the whole path, in CI's time."""


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS, ids=[p.name for p in PRESETS])
def test_each_preset_runs_end_to_end(preset: Preset, tmp_path: Path) -> None:
    from scievals.scibench.task import scibench

    for model in ("scievals/reference", "mockllm/model"):
        [log] = eval(
            scibench(preset=preset.name, data_dir=str(DATA)),
            model=model,
            limit=LIMIT,
            display="none",
            log_dir=str(tmp_path / model.replace("/", "-")),
        )
        assert log.status == "success", log.error
        protocol = log.eval.metadata["protocol"]  # type: ignore[index]
        assert (protocol["preset"], protocol["overridden"]) == (preset.name, None)
        assert protocol["preset_fields"] == preset.record()
        assert [f for f, v in preset.record().items() if not _shown(log, f, v)] == []
        size = 583 if preset.fields["version"] == "old" else 580
        assert protocol["steps_counted"] == size and len(log.samples or []) == LIMIT
        judge = "opencompass" if preset.fields["scorer"] == "opencompass" else "robust"
        scores = [s.scores[name] for s in log.samples or [] for name in s.scores if judge in name]
        assert len(scores) == LIMIT
        missed = [r.explanation or "" for r in scores if r.as_float() != 1.0]
        if model == "mockllm/model":
            assert len(missed) == LIMIT
        else:  # the gold is right except where it cannot be read (old fund-24 is empty)
            assert all("gold-unparsable" in why for why in missed) and len(missed) <= 1
