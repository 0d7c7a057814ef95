"""The SciCode config (one typed, frozen record of the knobs), the package's exports, and the
registry names Inspect finds the scorer by."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from inspect_ai.util import registry_create, registry_info
from pydantic import ValidationError

import scievals._registry  # noqa: F401 - what Inspect's entry point loads
import scievals.scicode
from scievals.agents.limits import AgentLimits
from scievals.inputs import InputError
from scievals.scicode.config import SciCodeConfig, sandbox_config


def test_defaults_are_the_official_protocol():
    config = SciCodeConfig()
    assert (config.split, config.prompt_protocol, config.previous_steps) == (
        "test",
        "single_turn",
        "model",
    )
    assert (config.extraction, config.step_timeout, config.targets) == ("inspect", 300, "auto")
    assert not config.gold_previous and config.prompt == "single_turn"
    assert (config.dataset, config.steps_convention, config.runtime_names) == (
        "original",
        "official",
        ("2024",),
    )
    assert not config.all_runtimes


def test_verified_defaults_are_its_canonical_protocol():
    config = SciCodeConfig(dataset="verified")
    assert (config.steps_convention, config.runtime_names, config.step_timeout) == (
        "verified",
        ("2024", "2025"),
        1800,
    )
    explicit = SciCodeConfig(dataset="verified", runtimes="2025", timeout=60)
    assert (explicit.runtime_names, explicit.step_timeout) == (("2025",), 60)


def test_frozen_and_closed():
    config = SciCodeConfig(split="dev")
    with pytest.raises(ValidationError):
        config.split = "test"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="background"):
        SciCodeConfig(background=True)  # type: ignore[call-arg]


def test_gold_previous_steps():
    config = SciCodeConfig(split="dev", previous_steps="gold", prompt_protocol="chat")
    assert config.gold_previous
    assert config.prompt == "chat + gold previous steps"
    with pytest.raises(ValidationError, match="previous_steps=gold needs split=dev"):
        SciCodeConfig(split="all", previous_steps="gold")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"split": "train"}, "split"),
        ({"targets": "regenerated"}, "dev split only"),
        ({"targets": "bogus"}, "targets"),
        ({"timeout": -1}, "timeout"),
        ({"dataset": "verified", "split": "dev"}, "test split only"),
        ({"dataset": "bogus"}, "dataset"),
        ({"step_count": "verified"}, "use dataset=verified"),
        ({"dataset": "verified", "step_count": "upstream"}, "counts the original test split"),
        ({"step_count": "bogus"}, "step_count"),
        ({"runtimes": "2024,1999"}, "unknown scoring runtime 1999"),
        ({"runtimes": "2025,2025"}, "named twice"),
        ({"runtimes": ""}, "none given"),
    ],
)
def test_bad_values(params, message):
    with pytest.raises(ValidationError, match=message):
        SciCodeConfig(**params)


def test_sandbox_limits_follow_the_timeout():
    assert (sandbox_config(300).cpu_seconds, sandbox_config(300).wall_seconds) == (600.0, 1800.0)
    assert (sandbox_config(3600).cpu_seconds, sandbox_config(3600).wall_seconds) == (3600.0, 3600.0)


# ---- the package ------------------------------------------------------------------------------


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_exports_are_loaded_on_first_use():
    assert _python("import sys, scievals.scicode; print('inspect_ai' in sys.modules)") == "False"
    assert _python(
        "import sys; from scievals.scicode import extract_code; print('inspect_ai' in sys.modules)"
    ) == "False"  # fmt: skip
    for name in scievals.scicode.__all__:
        assert getattr(scievals.scicode, name) is not None
    from scievals.scicode import grade, scicode

    assert callable(grade) and callable(scicode)
    assert registry_info(scicode).name == "scievals/scicode"
    with pytest.raises(AttributeError):
        scievals.scicode.no_such_name  # noqa: B018


def test_grade_is_the_function_even_after_its_module_is_imported():
    code = (
        "import inspect, scievals.scicode.grade\n"
        "from scievals.scicode import grade\n"
        "print(inspect.iscoroutinefunction(grade))"
    )
    assert _python(code) == "True"


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"split": "dev", "previous_steps": "gold", "timeout": 60, "extraction": "original"},
        {"dataset": "verified", "runtimes": "2025,2024", "all_runtimes": True},
        {"split": "all", "step_count": "inspect_evals", "prompt_protocol": "chat"},
        {"agent": "react", "agent_limits": AgentLimits(messages=5, tokens=None, time=30)},
        {"agent": "react", "prompt_protocol": "whole_problem", "split": "dev"},
    ],
    ids=["defaults", "gold-dev", "verified-runtimes", "chat-all", "agent-limits", "agent-whole"],
)
def test_the_record_is_plain_json_and_rebuilds_the_same_config(params):
    """Solvers and scorers are given ``record()`` (what Inspect writes in the log) and rebuild
    the config from it: the same config, every field given, through JSON and back."""
    config = SciCodeConfig.from_params(**params)
    record = json.loads(json.dumps(config.record()))
    assert set(record) == set(SciCodeConfig.model_fields)
    rebuilt = SciCodeConfig.from_record(record)
    assert rebuilt.record() == record
    assert rebuilt.model_dump(exclude=set(RESOLVED)) == config.model_dump(exclude=set(RESOLVED))
    assert [getattr(rebuilt, name) for name in RESOLVED.values()] == [
        getattr(config, name) for name in RESOLVED.values()
    ]


RESOLVED = {
    "timeout": "step_timeout",
    "runtimes": "runtime_names",
    "step_count": "steps_convention",
}
"""Fields whose default depends on others: the record holds them resolved."""


def test_agent_limits_belong_to_an_agent():
    """As in SciBench: the defaults when an agent is given without limits, none without one."""
    assert SciCodeConfig(agent="react").agent_limits == AgentLimits()
    assert SciCodeConfig(agent_limits=AgentLimits(messages=3)).agent_limits is None


# ---- registry names ---------------------------------------------------------------------------


def test_scorer_found_by_the_name_logs_record():
    """Logs record ``scicode_scorer`` (no package); both names create the same scorer."""
    config = SciCodeConfig(split="dev", timeout=1800).record()
    for name in ("scicode_scorer", "scievals/scicode_scorer"):
        scorer = registry_create("scorer", name, config=config)
        assert registry_info(scorer).name.split("/")[-1] == "scicode_scorer"
        assert registry_info(scorer).metadata  # metrics travel with it
    with pytest.raises(InputError, match="targets"):
        registry_create("scorer", "scicode_scorer", config={**config, "targets": "bogus"})
    # `inspect score LOG --scorer scievals/scicode_scorer -S h5=PATH`, and logs that recorded
    # the fields one by one: fields given over the config (or the defaults)
    changed = registry_create("scorer", "scicode_scorer", split="dev", runtimes=["2024"])
    assert registry_info(changed).name.split("/")[-1] == "scicode_scorer"
    with pytest.raises(InputError, match="split"):
        registry_create("scorer", "scicode_scorer", config=config, split="nowhere")
