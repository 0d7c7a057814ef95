"""Prompts (spec §2), split sizes and the pre-supplied steps.

Single-turn prompts are compared byte for byte with the official ``Gencode`` prompt builder (from
the nvidia-scicode wheel) on every scored step of both splits, with and without background;
chat prompts with inspect_evals' own ``template.format(**sub_step)``.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, ModelName, ModelOutput
from inspect_ai.solver import TaskState

from scievals.models.reference import REPLY_KEY
from scievals.scicode import solver as solver_module
from scievals.scicode.data.dataset import (
    PRESUPPLIED_STEPS,
    find_step,
    load_problems,
    official_file,
)
from scievals.scicode.extract import top_level_names
from scievals.scicode.prompts import (
    chat_step_prompt,
    chat_system_prompt,
    chat_templates,
    single_turn_prompt,
    single_turn_template,
)
from scievals.scicode.reference import gold_reply
from scievals.scicode.solver import STORE_KEY, chat_solver, single_turn_solver
from scievals.scicode.task import problem_samples

from .conftest import inspect_evals_source, official_source


def _raw_problems() -> dict[str, dict[str, Any]]:
    raw = {}
    for name in ("problems_all.jsonl", "problems_dev.jsonl"):
        for line in official_file(name).decode().splitlines():
            if line.strip():
                item = json.loads(line)
                raw[str(item["problem_id"])] = item
    return raw


def _official_gencode(background: bool, previous: list[str]):
    """The official prompt builder (class Gencode), without its model plumbing."""
    tree = ast.parse(official_source("scicode/gen/gencode_json.py"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Gencode")
    namespace: dict[str, Any] = {
        "Path": __import__("pathlib").Path,
        "Optional": __import__("typing").Optional,
        "DEFAULT_PROMPT_TEMPLATE": single_turn_template(False),
    }
    exec(compile(ast.Module([cls], []), "<gencode>", "exec"), namespace)
    gencode = namespace["Gencode"].__new__(namespace["Gencode"])
    gencode.with_background = background
    gencode.previous_llm_code = previous
    return gencode


@pytest.mark.parametrize("background", [False, True], ids=["no-background", "background"])
def test_single_turn_prompts_match_official_builder(background):
    raw = _raw_problems()
    template = single_turn_template(background)
    checked = 0
    for problem in load_problems("all"):
        previous = {
            s.step_id: f"def code_{s.step_id.replace('.', '_')}():\n    pass" for s in problem.steps
        }
        gencode = _official_gencode(background, [previous[s.step_id] for s in problem.steps])
        for number, step in enumerate(problem.steps, start=1):
            if not step.scored:
                continue
            ours = single_turn_prompt(problem, step, previous, background)
            theirs, _ = gencode.generate_prompt_with_steps(
                raw[problem.problem_id], number, template
            )
            assert ours == theirs, step.step_id
            checked += 1
    assert checked == 338


def test_single_turn_layout_by_hand():
    problem = next(p for p in load_problems("dev") if p.problem_id == "29")
    s1, s2, s3 = problem.steps
    codes = {"29.1": "CODE1", "29.2": "CODE2"}
    prompt = single_turn_prompt(problem, s3, codes, background=False)
    previous = f"{s1.description}\n\nCODE1\n\n------\n\n{s2.description}\n\nCODE2"
    assert f"PREVIOUS STEPS DESCRIPTION:\n{previous}\n\nNEXT STEP" in prompt
    next_step = f"{s3.description}\n\n{s3.function_header}\n\n{s3.return_line}"
    assert f"\n\n{next_step}\n\nDEPENDENCIES:\n" in prompt
    assert (
        f"Do not include these dependencies at the beginning of your code.\n{problem.dependencies}\n\nRESPONSE"
        in prompt
    )
    assert "------\n\n" + s3.description not in prompt  # the last separator is dropped
    first = single_turn_prompt(problem, s1, {}, background=False)
    assert "PREVIOUS STEPS DESCRIPTION:\n\n\nNEXT STEP" in first
    with_bg = single_turn_prompt(problem, s3, codes, background=True)
    assert with_bg.startswith(
        "PROBLEM DESCRIPTION:\nYou will be provided with problem steps along with background"
    )
    assert f"{s1.description}\n{s1.background}\n\nCODE1" in with_bg
    assert f"{s3.description}\n{s3.background}\n\n{s3.function_header}" in with_bg
    assert f"beginning of your code.\n\n{problem.dependencies}\n\nRESPONSE" in with_bg
    assert not with_bg.endswith("\n")


def test_chat_templates_from_verified_wheel():
    templates = chat_templates()
    assert set(templates) == {
        "INITIAL_PROMPT",
        "INITIAL_PROMPT_PROVIDE_BACKGROUND",
        "SUBPROBLEM_PROMPT",
        "SUBPROBLEM_PROMPT_PROVIDE_BACKGROUND",
    }
    namespace: dict[str, Any] = {}
    exec(inspect_evals_source("inspect_evals/scicode/prompt_templates.py"), namespace)
    for key, text in templates.items():
        assert namespace[key] == text


@pytest.mark.parametrize("background", [False, True], ids=["no-background", "background"])
def test_chat_prompts_as_inspect_evals_formats_them(background):
    raw = _raw_problems()
    templates = chat_templates()
    suffix = "_PROVIDE_BACKGROUND" if background else ""
    for problem in load_problems("all"):
        system = templates["INITIAL_PROMPT" + suffix].format(
            required_dependencies=raw[problem.problem_id]["required_dependencies"]
        )
        assert chat_system_prompt(problem, background) == system
        for raw_step, step in zip(raw[problem.problem_id]["sub_steps"], problem.steps, strict=True):
            if raw_step["return_line"] is None:
                # 13.6 and 62.1 have no return line: inspect_evals shows "None", and so do we.
                assert step.step_id in ("13.6", "62.1")
            theirs = templates["SUBPROBLEM_PROMPT" + suffix].format(**raw_step)
            assert chat_step_prompt(step, background) == theirs, step.step_id


# ---- splits and pre-supplied steps ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "problems", "steps", "scored", "tests"),
    [("test", 65, 291, 288, 915), ("dev", 15, 50, 50, 167), ("all", 80, 341, 338, 1082)],
)
def test_split_sizes(split, problems, steps, scored, tests):
    loaded = load_problems(split)
    assert len(loaded) == problems
    assert sum(len(p.steps) for p in loaded) == steps
    assert sum(len(p.scored_steps) for p in loaded) == scored
    assert sum(len(s.tests) for p in loaded for s in p.steps) == tests
    dataset = problem_samples(loaded)
    assert len(dataset) == problems
    assert sum(len(s.metadata["steps"]) for s in dataset) == scored


def test_dev_problem_ids_and_gold():
    dev = load_problems("dev")
    assert {p.problem_id for p in dev} == {
        "1",
        "3",
        "4",
        "6",
        "7",
        "10",
        "19",
        "29",
        "38",
        "44",
        "47",
        "49",
        "51",
        "70",
        "78",
    }
    assert all(s.gold_code for p in dev for s in p.steps)
    assert not any(s.gold_code for p in load_problems("test") for s in p.steps)


def test_cmp_imports_removed_from_tests():
    for problem in load_problems("all"):
        for step in problem.steps:
            for test in step.tests:
                assert "scicode.compare" not in test, step.step_id


def test_presupplied_steps_have_whole_class_code():
    names = {}
    for step_id in PRESUPPLIED_STEPS:
        _, step = find_step(step_id, "test")
        assert not step.scored and step.tests == ()
        names[step_id] = top_level_names(step.presupplied_code)
    assert names == {
        "13.6": {"Maxwell"},
        "62.1": {"Block", "EnlargedBlock"},
        "76.3": {"generate_dna"},
    }
    maxwell = next(
        n
        for n in ast.parse(find_step("13.6", "test")[1].presupplied_code).body
        if isinstance(n, ast.ClassDef)
    )
    init = next(n for n in maxwell.body if isinstance(n, ast.FunctionDef))
    assert init.name == "__init__" and len(init.body) == 18  # the whole constructor, in its class
    for step_id in PRESUPPLIED_STEPS:
        code = find_step(step_id, "test")[1].presupplied_code
        assert code == official_file(f"{step_id}.txt").decode()
    assert all(
        s.scored
        for p in load_problems("all")
        for s in p.steps
        if s.step_id not in PRESUPPLIED_STEPS
    )


# ---- the solver's use of prompts -----------------------------------------------------------------


class _Recorder:
    """A model that records what it is asked, and the reference reply offered for each call."""

    def __init__(self, reply: str = "```python\ndef nothing():\n    pass\n```"):
        self.calls: list[list[Any]] = []
        self.offered: list[str | None] = []
        self.reply = reply
        self.state: TaskState | None = None

    async def generate(self, messages):
        self.calls.append(list(messages))
        assert self.state is not None
        self.offered.append(self.state.store.get(REPLY_KEY))
        return ModelOutput.from_content(model="recorder", content=self.reply)


def _solve(monkeypatch, factory, problem_id: str, split: str, **kwargs):
    recorder = _Recorder()
    monkeypatch.setattr(solver_module, "get_model", lambda: recorder)
    state = TaskState(
        model=ModelName("test/recorder"),
        sample_id=problem_id,
        epoch=1,
        input=problem_id,
        messages=[],
        metadata={"problem_id": problem_id},
    )
    recorder.state = state
    solve = factory({"split": split, **kwargs})
    state = __import__("asyncio").run(solve(state, None))  # type: ignore[arg-type]
    return recorder, state


def test_solver_single_turn_presupplied_code_shown_whole(monkeypatch):
    recorder, state = _solve(monkeypatch, single_turn_solver, "62", "test")
    assert len(recorder.calls) == 5  # 62.2 .. 62.6; 62.1 is never asked for
    first = recorder.calls[0][0].text
    assert "class Block" in first and "class EnlargedBlock" in first
    stored = state.store.get(STORE_KEY)
    assert set(stored["completions"]) == {"62.2", "62.3", "62.4", "62.5", "62.6"}
    assert stored["codes"]["62.1"] == find_step("62.1", "test")[1].presupplied_code
    assert stored["codes"]["62.2"] == "def nothing():\n    pass"
    # Each single-turn prompt is one user message; later ones carry the model's earlier code.
    assert all(len(call) == 1 for call in recorder.calls)
    assert "def nothing():" in recorder.calls[1][0].text
    assert [m.role for m in state.messages] == ["user", "assistant"]
    assert state.messages[0].text == recorder.calls[-1][0].text
    # The test split has no gold: nothing is offered to the reference model.
    assert recorder.offered == [None] * 5


def test_solver_chat_presupplied_as_assistant_turn(monkeypatch):
    recorder, state = _solve(monkeypatch, chat_solver, "13", "test")
    assert len(recorder.calls) == 14
    roles = [m.role for m in state.messages]
    assert roles[:2] == ["system", "user"] and state.messages[1].text == "13"
    assert roles.count("assistant") == 15 and roles.count("user") == 16
    supplied = [
        m
        for m in state.messages
        if isinstance(m, ChatMessageAssistant) and "class Maxwell" in m.text
    ]
    assert len(supplied) == 1
    # Each call carries the whole conversation so far (system, problem id, earlier turns).
    assert [len(call) for call in recorder.calls[:2]] == [3, 5]


def test_solver_gold_previous_steps(monkeypatch):
    recorder, state = _solve(monkeypatch, single_turn_solver, "29", "dev", previous_steps="gold")
    gold1 = find_step("29.1", "dev")[1].gold_code
    assert gold1 in recorder.calls[1][0].text
    assert "def nothing" not in recorder.calls[2][0].text


def test_solver_original_extraction(monkeypatch):
    recorder, state = _solve(monkeypatch, single_turn_solver, "1", "dev", extraction="original")
    assert state.store.get(STORE_KEY)["codes"]["1.1"] == "\ndef nothing():\n    pass\n"


@pytest.mark.parametrize("factory", [single_turn_solver, chat_solver], ids=["single-turn", "chat"])
def test_solvers_offer_each_steps_gold_to_the_reference_model(monkeypatch, factory):
    recorder, state = _solve(monkeypatch, factory, "29", "dev")
    assert recorder.offered == [gold_reply(s) for s in find_step("29.1", "dev")[0].steps]
    assert all(recorder.offered)
    assert REPLY_KEY not in state.store  # not left behind in the log's store


def test_task_picks_the_protocols_solver_given_the_whole_config():
    """What the log's plan records for the solver: the run's config as plain JSON (small
    knobs, not the problem set), from which the same config is rebuilt."""
    from inspect_ai._util.registry import registry_info, registry_params

    from scievals.scicode.config import SciCodeConfig
    from scievals.scicode.task import scicode

    cases = [
        ({"split": "dev", "previous_steps": "gold"}, "scievals/single_turn_solver"),
        (
            {"split": "dev", "prompt_protocol": "chat", "extraction": "original"},
            "scievals/chat_solver",
        ),
        ({"split": "dev", "prompt_protocol": "whole_problem"}, "scievals/whole_problem_solver"),
        ({"split": "dev", "agent": "react"}, "scievals/agent_solver"),
    ]
    for params, name in cases:
        solver = scicode(**params).solver
        assert registry_info(solver).name == name
        recorded = registry_params(solver)
        assert list(recorded) == ["config"]
        assert recorded["config"] == SciCodeConfig.from_params(**params).record()


def test_templates_read_once(monkeypatch):
    """Prompts do not re-read or re-hash the template files (cached per process)."""
    from scievals.scicode import prompts

    single_turn_template(False)
    chat_templates()
    monkeypatch.setattr(prompts, "official_file", lambda *a: pytest.fail("re-read"))
    monkeypatch.setattr(prompts, "pip_wheel", lambda *a: pytest.fail("re-fetched"))
    problem = load_problems("dev")[0]
    for step in problem.steps:
        single_turn_prompt(problem, step, {}, False)
        chat_step_prompt(step, False)
