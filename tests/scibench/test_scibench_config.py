"""The SciBench protocol config: built once from the task's parameters, checked, and recorded."""

from __future__ import annotations

import pytest
from inspect_ai.util import registry_info

from scievals.inputs import InputError
from scievals.protocol import PROTOCOL_KEYS
from scievals.scibench.config import SciBenchConfig
from scievals.scibench.dataset import BOOKS
from scievals.scibench.task import _solvers


def test_defaults_follow_the_era_of_the_data() -> None:
    assert SciBenchConfig.from_params().shots == 3
    assert SciBenchConfig.from_params(version="old").shots == 5
    assert SciBenchConfig.from_params(books="all").books == BOOKS
    assert SciBenchConfig.from_params(books=" quan, atkins ").books == ("quan", "atkins")


def test_sandbox_only_where_model_code_runs() -> None:
    assert SciBenchConfig.from_params(sandbox="docker").sandbox is None
    assert SciBenchConfig.from_params(setting="python").sandbox == "scievals"
    assert SciBenchConfig.from_params(setting="python", sandbox="docker").sandbox == "docker"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"setting": "zero-shot"}, "setting must be one of zero_nosys, zero, zero_cot"),
        ({"version": "v3"}, "version must be one of main, old, not 'v3'"),
        ({"subset": "exams"}, "subset must be one of textbook, multimodal, exam, solutions"),
        ({"scorer": "strict"}, "scorer must be one of faithful, robust, both"),
        ({"books": "atkins,physics"}, "unknown SciBench books ['physics']"),
        ({"subset": "multimodal", "setting": "few"}, "the multimodal subset supports zero_nosys"),
        ({"shots": -1}, "shots must be 0 or more"),
        ({"timeout": 0}, "timeout must be a positive number of seconds"),
        ({"abs_tol": -1e-3}, "abs_tol must be 0 or more"),
    ],
)
def test_bad_parameters_are_input_errors(params: dict, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SciBenchConfig.from_params(**params)


def test_protocol_record_is_written_from_the_config() -> None:
    config = SciBenchConfig.from_params(setting="few_cot", shots=2, scorer="robust", errata=True)
    record = config.protocol("main (local /data)", 33)
    assert tuple(record) == PROTOCOL_KEYS
    assert record["prompt"] == "few_cot (2 shots)" and record["scorer"] == "robust + errata"
    assert (record["split"], record["steps_counted"], record["timeout"]) == ("textbook", 33, None)
    tool = SciBenchConfig.from_params(setting="python", subset="solutions").protocol("old", 5)
    assert tool["prompt"] == "python (4 examples, thermo 3)" and tool["timeout"] == 30
    image = SciBenchConfig.from_params(subset="multimodal", setting="zero_cot")
    assert image.prompt == "zero_cot + image (native vision)"


@pytest.mark.parametrize(
    ("setting", "chain"),
    [
        ("zero", ["reference_reply", "official_generate"]),
        ("zero_cot", ["reference_reply", "zero_cot"]),
        ("python", ["reference_reply", "official_generate", "run_python"]),
        ("wolfram", ["reference_reply", "official_generate", "run_wolfram"]),
    ],
)
def test_solver_chain_follows_the_setting(setting: str, chain: list[str]) -> None:
    solvers = _solvers(SciBenchConfig.from_params(setting=setting))
    assert [registry_info(s).name for s in solvers] == [f"scievals/{name}" for name in chain]
