"""Prompts: the official single-turn cumulative templates, and inspect_evals' chat protocol.

Template text is read from the packages that define it rather than copied, so a prompt is
byte-for-byte what the reference harness sends: the single-turn templates from the nvidia-scicode
wheel (with the problem files), the chat templates from the inspect-evals wheel. Each wheel is
fetched once into the cache and verified by sha256, and each template read once per process.
"""

from __future__ import annotations

import ast
from functools import cache

from scievals.artifacts import pip_wheel, wheel_member
from scievals.scicode.data.dataset import Problem, Step, official_file

INSPECT_EVALS_WHEEL = "inspect-evals==0.26.0"
INSPECT_EVALS_WHEEL_SHA256 = "b76d15813182807da141a0f06bb6f18a5f82d1f06291ec2633bb84cdf661f8d0"
CHAT_TEMPLATES_MEMBER = "inspect_evals/scicode/prompt_templates.py"
CHAT_TEMPLATES_SHA256 = "419999446de2b3cf095a8fe4e0bd70fecac42831b280aa8534cff61ad664a689"


@cache
def single_turn_template(background: bool) -> str:
    name = "multistep_template.txt" if background else "background_comment_template.txt"
    return official_file(name).decode()


@cache
def chat_templates() -> dict[str, str]:
    """inspect_evals' four chat templates, read as string literals (the module is never run)."""
    wheel = pip_wheel(INSPECT_EVALS_WHEEL, INSPECT_EVALS_WHEEL_SHA256)
    source = wheel_member(wheel, CHAT_TEMPLATES_MEMBER, CHAT_TEMPLATES_SHA256).decode()
    templates = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            templates[node.targets[0].id] = node.value.value  # type: ignore[attr-defined]
    return templates


def _describe(step: Step, background: bool) -> str:
    return step.description + "\n" + step.background if background else step.description


def single_turn_prompt(
    problem: Problem, step: Step, previous_code: dict[str, str], background: bool
) -> str:
    """The official prompt for ``step``: earlier steps with the code used for them, then this one."""
    lines: list[str] = []
    for earlier in problem.earlier(step):
        lines += [_describe(earlier, background), previous_code.get(earlier.step_id, ""), "------"]
    next_step = [_describe(step, background), f"{step.function_header}\n\n{step.return_line}"]
    return single_turn_template(background).format(
        problem_steps_str="\n\n".join(lines[:-1]),
        next_step_str="\n\n".join(next_step),
        dependencies=problem.dependencies,
    )


def chat_system_prompt(problem: Problem, background: bool) -> str:
    key = "INITIAL_PROMPT_PROVIDE_BACKGROUND" if background else "INITIAL_PROMPT"
    return chat_templates()[key].format(required_dependencies=problem.dependencies)


def chat_step_prompt(step: Step, background: bool) -> str:
    key = "SUBPROBLEM_PROMPT_PROVIDE_BACKGROUND" if background else "SUBPROBLEM_PROMPT"
    return chat_templates()[key].format(
        step_description_prompt=step.description,
        function_header=step.function_header,
        return_line=step.return_line,
        step_background=step.background,
    )
