"""Presets: the code's fields are the documented ones, and building a task with one records it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scievals.presets import Preset, spelled
from scievals.scibench.presets import PRESETS as SCIBENCH
from scievals.scicode.presets import PRESETS as SCICODE

DOC = Path(__file__).resolve().parents[1] / "docs" / "presets.md"
ALL = [("scicode", p) for p in SCICODE] + [("scibench", p) for p in SCIBENCH]
ROW = re.compile(r"^\| `([a-z_]+)` \| `([^`]*)` \| (.*) \|$")


def _documented() -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    """(benchmark, preset) -> field -> (value, source), from the tables of docs/presets.md."""
    tables: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"^### (scicode|scibench): `([a-z_]+)`$", line):
            current = tables.setdefault((heading[1], heading[2]), {})
        elif line.startswith("## ") or line.startswith("### "):
            current = None
        elif current is not None and (row := ROW.match(line)):
            current[row[1]] = (row[2], row[3].strip())
    return tables


@pytest.mark.parametrize(("benchmark", "preset"), ALL, ids=[f"{b}-{p.name}" for b, p in ALL])
def test_every_field_is_documented_with_its_source(benchmark: str, preset: Preset) -> None:
    table = _documented()[(benchmark, preset.name)]
    assert {k: spelled(v) for k, v in preset.record().items()} == {
        k: v for k, (v, _) in table.items()
    }
    assert all(source for _, source in table.values())


def test_no_preset_is_documented_that_the_code_lacks() -> None:
    assert set(_documented()) == {(b, p.name) for b, p in ALL}


def test_a_preset_sets_every_field_and_records_what_was_overridden() -> None:
    from scievals.scicode.task import scicode

    task = scicode(preset="nemo", split="dev", timeout=30)
    protocol = task.metadata["protocol"]
    assert protocol["preset"] == "nemo"
    assert protocol["overridden"] == {"split": "dev"}  # the same timeout is no override
    assert protocol["preset_fields"]["split"] == "all" and protocol["preset_fields"]["epochs"] == 16
    assert (protocol["split"], protocol["background"], protocol["timeout"]) == ("dev", True, 30)
    assert "extraction=original" in protocol["scorer"] and protocol["runtimes"] == ["2024"]
    assert (task.epochs, task.config.temperature) == (16, 0.6)


def test_without_a_preset_nothing_changes() -> None:
    from scievals.scibench.task import scibench

    task = scibench(books="atkins", version="old", data_dir=str(_scibench_data()))
    protocol = task.metadata["protocol"]
    assert (protocol["preset"], protocol["overridden"], task.epochs) == (None, None, 1)


def test_a_scibench_preset_sets_its_generation_length() -> None:
    from scievals.scibench.task import scibench

    task = scibench(preset="opencompass", books="quan", data_dir=str(_scibench_data()))
    assert (task.config.max_tokens, task.config.temperature) == (512, 0.0)
    assert task.metadata["protocol"]["overridden"] == {"books": "quan"}


def test_an_unknown_preset_is_one_line_naming_the_choices() -> None:
    from scievals.inputs import InputError
    from scievals.scicode.task import scicode

    with pytest.raises(InputError, match=r"^preset must be one of paper, paper_background, "):
        scicode(preset="papers")


def test_the_front_door_takes_preset_as_an_option() -> None:
    from scievals.cli import _eval_args

    assert _eval_args("scicode", ["--preset", "verified"])[2:4] == ["-T", "preset=verified"]


def _scibench_data() -> Path:
    data = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "scibench"
    if not (data / "old" / "dataset").is_dir():
        pytest.skip(f"no SciBench data at {data}")
    return data


def test_the_report_names_what_a_run_changed_of_its_preset() -> None:
    from scievals.report.build import overridden, settings
    from scievals.report.load import Run

    [nemo] = [p for p in SCICODE if p.name == "nemo"]
    protocol = {
        "benchmark": "scicode",
        "preset": "nemo",
        "preset_fields": nemo.record(),
        "overridden": {"split": "dev"},
    }
    run = Run("log.eval", "scicode", "m", protocol, 0.6, 4, "", "success", [], 0)
    assert overridden(run) == {"split": "dev", "epochs": 4}  # --epochs 4 over the preset's 16
    shown = settings(run)
    assert shown["overridden"] == "split dev, epochs 4" and "preset fields" not in shown


def test_every_preset_cites_sources_the_docs_list() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("## Sources") : text.index("## SciCode")]
    listed = set(re.findall(r"^\| ([^|]+?) \|", table, flags=re.M)) - {"name", "---"}
    assert all(p.sources and set(p.sources) <= listed for _, p in ALL)


LIMITS = {
    "agent_message_limit": ("messages", 7),
    "agent_token_limit": ("tokens", 900),
    "agent_tool_call_limit": ("tool_calls", 3),
    "agent_tool_timeout": ("tool_timeout", 11),
    "agent_time_limit": ("time", 120),
}


@pytest.mark.parametrize("benchmark", ["scicode", "scibench"])
@pytest.mark.parametrize("parameter", sorted(LIMITS))
def test_every_agent_limit_given_to_a_task_reaches_its_protocol(benchmark, parameter) -> None:
    field, value = LIMITS[parameter]
    if benchmark == "scicode":
        from scievals.scicode.task import scicode

        task = scicode(split="dev", agent="react", **{parameter: value})
    else:
        from scievals.scibench.task import scibench

        task = scibench(
            books="atkins", data_dir=str(_scibench_data()), agent="react", **{parameter: value}
        )
    assert task.metadata["protocol"]["agent_limits"][field] == value
