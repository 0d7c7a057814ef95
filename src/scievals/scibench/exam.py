# inspect-evals-lint: ignore-file[custom_metric_tests] -- exam_points runs through the real reducer with two epochs in tests/scibench/test_scibench_tools.py
"""The exam subset: a user-supplied exam file graded by a grader model against its rubric.

SciBench's seven college exams were never published, so no score on them can be reproduced. This
accepts exams in the same shape (free-response, multiple-choice or true/false problems with points
and an instructor rubric) and reports points earned out of points possible per exam.

File format (JSON), either one exam object or ``{"exams": [exam, ...]}``::

    {"name": "Differential Equations exam 1",
     "problems": [
        {"id": "1", "question": "...", "points": 10, "rubric": "...",
         "type": "free_response" | "multiple_choice" | "true_false",
         "choices": ["A. ...", "B. ..."],          # multiple_choice only
         "reference_answer": "..."}                 # optional, shown to the grader
     ]}
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from scievals.inputs import InputError
from scievals.protocol import protocol
from scievals.scibench import prompts
from scievals.scibench.solver import official_generate, zero_cot

EXAM_SETTINGS = ("zero_nosys", "zero", "zero_cot")
PROBLEM_TYPES = ("free_response", "multiple_choice", "true_false")
GRADER_SYSTEM = (
    "You grade one answer to one exam problem, strictly by the instructor's rubric. Award partial "
    "credit only where the rubric allows it. End your reply with a line 'POINTS: <number>' giving "
    "the points earned, between 0 and the points possible."
)


MAX_EXAM_FILE_BYTES = 64 * 2**20  # an exam is a few hundred kB; more is not an exam file


def load_exams(path: str | Path) -> list[dict[str, Any]]:
    """Read and check an exam file; errors name the exam and problem at fault."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_EXAM_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the exam file ({exc.strerror})") from None
    if len(raw) > MAX_EXAM_FILE_BYTES:
        raise InputError(f"{path}: larger than {MAX_EXAM_FILE_BYTES >> 20} MiB, not an exam file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{path}: not a JSON exam file ({exc})") from None
    exams = data["exams"] if isinstance(data, dict) and "exams" in data else [data]
    if not isinstance(exams, list):
        raise InputError(f'{path}: "exams" must be a list of exams')
    for e, exam in enumerate(exams):
        if (
            not isinstance(exam, dict)
            or not isinstance(exam.get("name"), str)
            or not exam["name"]
            or not isinstance(exam.get("problems"), list)
            or not exam["problems"]
        ):
            raise InputError(f"{path}: exam {e} needs a name and a non-empty problems list")
        for p, problem in enumerate(exam["problems"]):
            where = f"{path}: {exam['name']} problem {p}"
            if not isinstance(problem, dict):
                raise InputError(f"{where}: expected an object with question, points and rubric")
            for key in ("question", "points", "rubric"):
                if key not in problem:
                    raise InputError(f"{where}: missing {key!r}")
            for key in ("question", "rubric"):
                if not isinstance(problem[key], str):
                    raise InputError(f"{where}: {key} must be text")
            if not isinstance(problem.get("choices", []), list):
                raise InputError(f"{where}: choices must be a list")
            if problem.get("type", "free_response") not in PROBLEM_TYPES:
                raise InputError(f"{where}: type must be one of {PROBLEM_TYPES}")
            points = problem["points"]
            if (
                isinstance(points, bool)
                or not isinstance(points, int | float)
                or not 0 < points < math.inf
            ):
                raise InputError(f"{where}: points must be a positive number")
    return exams


def question_text(problem: dict[str, Any]) -> str:
    """The problem as shown to the model: the question, then any choices, one per line."""
    text = problem["question"].strip()
    kind = problem.get("type", "free_response")
    if kind == "multiple_choice" and problem.get("choices"):
        text += "\n" + "\n".join(str(c) for c in problem["choices"])
    elif kind == "true_false":
        text += "\nAnswer True or False."
    return text


def _samples(exams: list[dict[str, Any]], setting: str) -> list[Sample]:
    samples = []
    for exam in exams:
        for p, problem in enumerate(exam["problems"]):
            text = question_text(problem)
            if setting == "zero_cot":
                messages = prompts.zero_cot_stage1(text)
            elif setting == "zero_nosys":
                messages = prompts.zero_messages(text, system="")
            else:
                messages = prompts.zero_messages(text)
            samples.append(
                Sample(
                    id=f"{exam['name']}#{problem.get('id', p)}",
                    input=prompts.to_chat(messages),
                    target=str(problem.get("reference_answer", "")),
                    metadata={
                        "exam": exam["name"],
                        "book": exam["name"],
                        "index": p,
                        "has_solution": bool(problem.get("reference_answer")),
                        "points": float(problem["points"]),
                        "rubric": problem["rubric"],
                        "type": problem.get("type", "free_response"),
                        "prompt_problem": text,
                    },
                )
            )
    return samples


def parse_points(text: str, possible: float) -> float | None:
    """The last "POINTS: x" of a grader reply, clamped to [0, possible]; None when absent."""
    found = re.findall(r"POINTS\s*:\s*([-+]?\d+(?:\.\d+)?)", text, flags=re.IGNORECASE)
    if not found:
        return None
    return min(max(float(found[-1]), 0.0), possible)


def grader_prompt(meta: dict[str, Any], answer: str, reference: str) -> str:
    lines = [
        f"Problem ({meta['points']:g} points):\n{meta['prompt_problem']}",
        f"Rubric:\n{meta['rubric']}",
    ]
    if reference:
        lines.append(f"Reference answer:\n{reference}")
    lines.append(f"Student answer:\n{answer}")
    return "\n\n".join(lines)


@metric
def exam_points() -> Metric:
    """Points earned and possible per exam, each exam's percentage, and their mean (the paper's).

    Earned points come from the score value (the share of the problem's points), which the epoch
    reducer averages; its metadata is the first epoch's only.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        earned: dict[str, float] = defaultdict(float)
        possible: dict[str, float] = defaultdict(float)
        for item in scores:
            meta = item.score.metadata or {}
            earned[meta["exam"]] += item.score.as_float() * float(meta["points_possible"])
            possible[meta["exam"]] += float(meta["points_possible"])
        result: dict[str, float] = {}
        for exam in sorted(possible):
            result[f"{exam} earned"] = earned[exam]
            result[f"{exam} possible"] = possible[exam]
            result[f"{exam} percent"] = 100 * earned[exam] / possible[exam]
        result["mean exam percent"] = sum(100 * earned[e] / possible[e] for e in possible) / max(
            len(possible), 1
        )
        return result

    return compute


@scorer(metrics=[exam_points()], name="rubric")
def rubric_grader(grader: str | None = None) -> Scorer:
    """Ask a grader to award points by the rubric.

    The grader is ``grader`` if given, else the "grader" role's model, else the model under test.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        model = get_model(grader) if grader else get_model(role="grader", default=get_model())
        reply = await model.generate(
            [
                ChatMessageSystem(content=GRADER_SYSTEM),
                ChatMessageUser(content=grader_prompt(meta, state.output.completion, target.text)),
            ],
            config=GenerateConfig(temperature=0.0),
        )
        points = parse_points(reply.completion, meta["points"])
        return Score(
            value=(points or 0.0) / meta["points"],
            answer=state.output.completion[-500:],
            explanation=reply.completion,
            metadata={
                "exam": meta["exam"],
                "points_earned": points or 0.0,
                "points_possible": meta["points"],
                "rule": "rubric" if points is not None else "grader-unparsed",
                "extracted": points is not None,
                "grader": str(model),
            },
        )

    return score


def exam_task(exam_file: str | None, grader: str | None, setting: str) -> Task:
    """The exam Task (the paper ran zero-shot and zero-shot CoT only)."""
    if not exam_file:
        raise InputError(
            "subset=exam needs exam_file=PATH: the SciBench exams are not public; see "
            "scievals.scibench.exam for the JSON format of your own exam"
        )
    if setting not in EXAM_SETTINGS:
        raise InputError(f"the exam subset supports {EXAM_SETTINGS}, not {setting!r}")
    exams = load_exams(exam_file)
    samples = _samples(exams, setting)
    return Task(
        dataset=MemoryDataset(samples, name="scibench-exam"),
        solver=[zero_cot() if setting == "zero_cot" else official_generate()],
        scorer=rubric_grader(grader),
        config=GenerateConfig(temperature=0.0),
        metadata={
            "protocol": protocol(
                "scibench",
                data_version=f"exam file {Path(exam_file).name}",
                split="exam",
                steps_counted=len(samples),
                prompt=setting,
                scorer=f"rubric (grader: {grader or 'grader role, else the model under test'})",
            ),
        },
    )
