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

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
)

from scievals.protocol import protocol
from scievals.sandbox import protocol_fields
from scievals.scibench import prompts, reference
from scievals.scibench.answers import official_unit
from scievals.scibench.dataset import BOOKS, Record, Source
from scievals.scibench.scorer import scorers
from scievals.scibench.solver import official_generate, run_python, run_wolfram, zero_cot

SUBSETS = ("textbook", "multimodal", "exam", "solutions")
IMAGE_SETTINGS = ("zero_nosys", "zero", "zero_cot")


def _books(books: str | list[str] | None) -> list[str]:
    if books is None or books == "" or books == "all":
        return list(BOOKS)
    names = books.split(",") if isinstance(books, str) else list(books)
    names = [b.strip() for b in names if b.strip()]
    unknown = [b for b in names if b not in BOOKS]
    if unknown:
        raise ValueError(f"unknown SciBench books {unknown}; choose from {', '.join(BOOKS)}")
    return names


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


def _messages(record: Record, setting: str, source: Source, shots: int) -> list[prompts.Message]:
    """The official message list of one problem under one setting."""
    text = prompts.test_text(record)
    if setting == "zero_nosys":
        return prompts.zero_messages(text, system="")
    if setting == "zero":
        return prompts.zero_messages(text)
    if setting == "zero_cot":
        return prompts.zero_cot_stage1(text)
    pool = source.book(record.book, pool="sol")
    if setting in ("few", "few_cot"):
        return prompts.few_messages(text, pool[:shots], cot=setting == "few_cot")
    n = prompts.tool_shots(record.book)
    codes = [source.tool_code(setting, record.book, i) for i in range(n)]
    return prompts.tool_messages(text, pool[:n], codes, setting)


def _sample(record: Record, setting: str, source: Source, shots: int) -> Sample:
    unit = official_unit(record.unit)
    image = record if record.pool in ("img", "img_sol") else None
    return Sample(
        id=record.sample_id,
        input=_chat(_messages(record, setting, source, shots), image),
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


def _records(subset: str, books: list[str], setting: str, source: Source, shots: int):
    if subset == "textbook":
        return [r for b in books for r in source.book(b)]
    if subset == "multimodal":
        if setting not in IMAGE_SETTINGS:
            raise ValueError(f"the multimodal subset supports {IMAGE_SETTINGS}, not {setting!r}")
        return [r for r in source.multimodal() if r.book in books]
    # solutions: skip the records a few-shot or tool prompt shows as worked examples
    records = []
    for book in books:
        pool = source.book(book, pool="sol")
        skip = {"few": shots, "few_cot": shots}.get(setting, 0)
        if setting in ("python", "wolfram"):
            skip = prompts.tool_shots(book)
        records += pool[skip:]
    return records


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
        raise ValueError(
            "setting=wolfram needs "
            + " and ".join(missing)
            + "; install them or use setting=python"
        )


@task
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
) -> Task:
    """SciBench (Wang et al., 2024).

    Args:
        version: data version, "main" (580 test problems) or "old" (583, the paper's Table 3).
        books: comma-separated subset of the ten textbooks (default: all).
        setting: zero_nosys, zero, zero_cot, few, few_cot, python or wolfram.
        shots: few-shot examples (default 3 on main, 5 on old: the code of each era).
        subset: textbook, multimodal, exam or solutions (error analysis only).
        scorer: faithful (the official rules), robust (ours) or both, side by side.
        data_dir: local copy of the data (else SCIEVALS_SCIBENCH_DIR, else download).
        sandbox: sandbox for model code in the tool settings (default "scievals").
        timeout: seconds per program run in the tool settings.
        errata: apply the known-gold-error overlay to the robust scorer.
        abs_tol: absolute tolerance of the robust scorer (0 gold needs an exact 0 when 0).
        exam_file: the exam JSON file (subset=exam).
        grader: the grader model for the exam rubric (subset=exam).
    """
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {SUBSETS}, not {subset!r}")
    if setting not in prompts.SETTINGS:
        raise ValueError(f"setting must be one of {prompts.SETTINGS}, not {setting!r}")
    if subset == "exam":
        from scievals.scibench.exam import exam_task

        return exam_task(exam_file, grader, setting)
    if setting == "wolfram":
        _check_wolfram()
    source = Source(version, data_dir)
    reference.remember(source)
    shots = shots if shots is not None else (3 if version == "main" else 5)
    chosen = _books(books)
    records = _records(subset, chosen, setting, source, shots)
    samples = [_sample(r, setting, source, shots) for r in records]

    solver = [zero_cot() if setting == "zero_cot" else official_generate()]
    sandbox_name = None
    if setting in ("python", "wolfram"):
        sandbox_name = sandbox or "scievals"
        solver.append(run_python(timeout) if setting == "python" else run_wolfram(timeout))
    prompt = setting
    if setting in ("few", "few_cot"):
        prompt += f" ({shots} shots)"
    elif setting in ("python", "wolfram"):
        prompt += " (4 examples, thermo 3)"
    if subset == "multimodal":
        prompt += " + image (native vision)"
    return Task(
        dataset=MemoryDataset(samples, name=f"scibench-{version}-{subset}"),
        solver=solver,
        scorer=scorers(scorer, errata, abs_tol),
        config=GenerateConfig(temperature=0.0),
        sandbox=sandbox_name,
        metadata={
            "protocol": protocol(
                "scibench",
                data_version=source.describe(),
                split=subset,
                steps_counted=len(samples),
                prompt=prompt,
                scorer=scorer + (" + errata" if errata else ""),
                timeout=timeout if sandbox_name else None,
                **protocol_fields(sandbox_name),
            ),
            "books": chosen,
        },
    )
