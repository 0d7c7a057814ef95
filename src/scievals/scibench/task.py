# inspect-evals-lint: ignore-file[main_file] -- task.py as in scievals/scicode; the package exports the task from __init__.py
"""``scievals/scibench``: the task and its protocol knobs, all recorded in the log's metadata.

    scievals eval scibench --setting zero --books atkins,chemmc --scorer both

Subsets: ``textbook`` (580 problems on main, 583 on old), ``multimodal`` (177 image problems,
sent as images: a new setting, the paper gave GPT-4 captions), ``exam`` (a user-supplied exam file,
graded with a rubric), and ``solutions`` (the 112-problem solution pool, for error analysis only:
never part of a SciBench score).
"""

from __future__ import annotations

import base64
import importlib.util
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
)
from inspect_ai.solver import Solver, generate

from scievals.agents import (
    AgentLimits,
    agent_parameters,
    agent_sandbox_spec,
)
from scievals.inputs import InputError
from scievals.prerequisite import prerequisite
from scievals.presets import presettable
from scievals.sandbox import sandbox_spec
from scievals.scibench import opencompass, prompts
from scievals.scibench.agent import agent_solver
from scievals.scibench.config import OPENCOMPASS_SETTINGS, TOOL_SETTINGS, SciBenchConfig
from scievals.scibench.dataset import Record, Source
from scievals.scibench.metrics import scibench_epochs
from scievals.scibench.presets import PRESETS
from scievals.scibench.reference import reference_reply
from scievals.scibench.scorer import scorers
from scievals.scibench.solver import official_generate, run_python, run_wolfram, zero_cot
from scievals.scibench.units import official_unit


def _chat(messages: list[prompts.Message], image: Record | None = None) -> list[ChatMessage]:
    """Inspect messages; an image problem gets its picture after the text of the last turn."""
    chat = prompts.to_chat(messages)
    if image is not None and image.image is not None:
        data = base64.b64encode(image.image.read_bytes()).decode("ascii")
        content: list[Content] = [
            ContentText(text=messages[-1].content),
            ContentImage(image=f"data:image/png;base64,{data}"),
        ]
        chat[-1] = ChatMessageUser(content=content)
    return chat


def _messages(record: Record, config: SciBenchConfig, source: Source) -> list[prompts.Message]:
    """The message list of one problem under the config's setting (the official harness's, or
    OpenCompass's)."""
    if config.setting in OPENCOMPASS_SETTINGS:
        return opencompass.messages(config.setting, record.problem_text, record.book)
    text = prompts.test_text(record)
    if config.setting == "zero_nosys":
        return prompts.zero_messages(text, system="")
    if config.setting == "zero":
        return prompts.zero_messages(text)
    if config.setting == "zero_cot":
        return prompts.zero_cot_stage1(text)
    pool = source.book(record.book, pool="sol")
    if config.setting in ("few", "few_cot"):
        return prompts.few_messages(text, pool[: config.shots], cot=config.setting == "few_cot")
    n = prompts.tool_shots(record.book)
    codes = [source.tool_code(config.setting, record.book, i) for i in range(n)]
    return prompts.tool_messages(text, pool[:n], codes, config.setting)


def _sample(record: Record, config: SciBenchConfig, source: Source) -> Sample:
    unit = official_unit(record.unit)
    image = record if record.pool in ("img", "img_sol") else None
    return Sample(
        id=record.sample_id,
        input=_chat(_messages(record, config, source), image),
        target=record.answer_number,
        metadata={
            "book": record.book,
            "subject": record.subject,
            "index": record.index,
            "pool": record.pool,
            "has_solution": bool(record.solution),
            "version": source.version,
            "problemid": record.problemid.strip(),
            "answer_number": record.answer_number,
            "unit": record.unit,
            "shown_unit": unit.shown,
            "rescaled": unit.rescaled,
            "prompt_problem": prompts.test_text(record),
        },
    )


def _records(config: SciBenchConfig, source: Source) -> list[Record]:
    if config.subset == "textbook":
        return [r for b in config.books for r in source.book(b)]
    if config.subset == "multimodal":
        return [r for r in source.multimodal() if r.book in config.books]
    # solutions: skip the records a few-shot or tool prompt shows as worked examples
    records = []
    for book in config.books:
        skip = {"few": config.shots, "few_cot": config.shots}.get(config.setting, 0)
        if config.setting in TOOL_SETTINGS:
            skip = prompts.tool_shots(book)
        records += source.book(book, pool="sol")[skip:]
    return records


def _solvers(config: SciBenchConfig) -> list[Solver]:
    """Reference reply (for ``scievals/reference``), the official call(s) or the agent, then any
    program run."""
    if config.agent and config.agent_limits:
        return [reference_reply(), agent_solver(config.agent, config.agent_limits.record())]
    if config.setting in OPENCOMPASS_SETTINGS:  # its one generation, no retry; no unit asked
        return [reference_reply(unit_shown=False), generate()]
    chain = [reference_reply(), zero_cot() if config.setting == "zero_cot" else official_generate()]
    if config.setting == "python":
        chain.append(run_python(config.timeout))
    elif config.setting == "wolfram":
        chain.append(run_wolfram(config.timeout))
    return chain


def _sandbox(config: SciBenchConfig) -> str | tuple[str, str] | None:
    """The sandbox of the tool settings and of an agent (a bare docker: one container for the
    agent, another for the program runs)."""
    if config.sandbox is None:
        return None
    spec = sandbox_spec(config.sandbox)
    return agent_sandbox_spec(config.sandbox, spec) if config.agent else spec  # type: ignore[return-value]


_TO_READ: ContextVar[bool] = ContextVar("scibench_to_read", default=False)


@contextmanager
def to_read() -> Iterator[None]:
    """Tasks built here are read, not run (``--verify`` reads a log's dataset and protocol of
    them): what only running needs, a Wolfram kernel, is not asked for."""
    token = _TO_READ.set(True)
    try:
        yield
    finally:
        _TO_READ.reset(token)


def _check_wolfram() -> None:
    kernel = os.environ.get("WOLFRAM_KERNEL") or shutil.which("wolframscript")
    missing = [
        name
        for name, ok in (
            ("the wolframclient package", importlib.util.find_spec("wolframclient") is not None),
            ("a Wolfram kernel (wolframscript on PATH or WOLFRAM_KERNEL)", bool(kernel)),
        )
        if not ok
    ]
    if missing:
        raise InputError(
            "setting=wolfram needs "
            + " and ".join(missing)
            + "; install them or use setting=python"
        )


@task
@presettable(PRESETS)
@agent_parameters
def scibench(
    version: str = "main",
    books: str | list[str] | None = None,
    setting: str = "zero",
    shots: int | None = None,
    subset: str = "textbook",
    scorer: str = "both",
    data_dir: str | None = None,
    sandbox: str | None = None,
    timeout: int = 30,
    errata: bool = False,
    abs_tol: float = 0.0,
    exam_file: str | None = None,
    grader: str | None = None,
    agent: str | None = None,
    agent_limits: AgentLimits | None = None,
) -> Task:
    """SciBench (Wang et al., 2024).

    Args:
        version: data version, "main" (580 test problems) or "old" (583, the paper's Table 3).
        books: comma-separated subset of the ten textbooks (default: all).
        setting: zero_nosys, zero, zero_cot, few, few_cot, python or wolfram (the official
            harness's), or opencompass_zs, opencompass_zs_cot, opencompass_fs,
            opencompass_fs_cot (OpenCompass's prompts).
        shots: few-shot examples (default 3 on main, 5 on old: the code of each era).
        subset: textbook, multimodal, exam or solutions (error analysis only).
        scorer: faithful (official), robust (ours), both side by side, opencompass (its rule), all.
        data_dir: local copy of the data (else SCIEVALS_SCIBENCH_DIR, else download).
        sandbox: sandbox for model code in the tool settings (default "scievals").
        timeout: seconds per program run in the tool settings.
        errata: apply the known-gold-error overlay to the robust scorer.
        abs_tol: absolute tolerance of the robust scorer (0 gold needs an exact 0 when 0).
        exam_file: the exam JSON file (subset=exam).
        grader: the grader model for the exam rubric (subset=exam).
        agent: an agent answers each problem after computing with Python in the sandbox:
            ``react`` (Inspect's react() with python, bash and submit), a registered Inspect
            agent, or ``FILE.py@NAME``; none: the setting's model call(s).
        agent_message_limit: messages per problem (0: no limit).
        agent_token_limit: tokens per problem (0 or none: no limit).
        agent_tool_call_limit: tool calls per problem (0: no limit).
        agent_tool_timeout: seconds per tool call.
        agent_time_limit: seconds per problem, model and tools together (0: no limit).
        agent_limits: the ``agent_*`` limits above as one record (``agents.agent_parameters``).
        preset: a published setup by name, setting every field above it names (docs/presets.md);
            the parameters given win over it and are recorded as overridden.
    """
    with prerequisite():
        config = SciBenchConfig.from_params(
            version=version,
            books=books,
            setting=setting,
            shots=shots,
            subset=subset,
            scorer=scorer,
            sandbox=sandbox,
            timeout=timeout,
            errata=errata,
            abs_tol=abs_tol,
            agent=agent,
            agent_limits=agent_limits,
        )
        if config.subset == "exam":
            from scievals.scibench.exam import exam_task

            return exam_task(exam_file, grader, config.setting)
        if config.setting == "wolfram" and not _TO_READ.get():
            _check_wolfram()
        source = Source(config.version, data_dir)
        samples = [_sample(r, config, source) for r in _records(config, source)]
    protocol = config.protocol(source.describe(), len(samples))
    return Task(
        dataset=MemoryDataset(samples, name=f"scibench-{config.version}-{config.subset}"),
        solver=_solvers(config),
        scorer=scorers(config),
        epochs=Epochs(1, scibench_epochs()),
        config=GenerateConfig(temperature=0.0),
        sandbox=_sandbox(config),
        metadata={"protocol": protocol, "books": list(config.books)},
    )
