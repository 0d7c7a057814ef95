# inspect-evals-lint: ignore-file[get_model_location] -- a command over a finished log, not a task: no solver or scorer exists to resolve the verifier in
"""The SciBench error-analysis protocol (``ana_error.py``, paper section 5), with its bugs fixed.

A verifier model attributes each wrong answer to one of ten skills. Only problems with a
reference solution qualify (the solution pool: run the task with ``subset=solutions``; and the
26 multimodal ``problem_solution`` items). Records are aligned by the sample's own book, pool and
index, not by list position (the official script paired test results with ``_sol`` records).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log
from inspect_ai.model import GenerateConfig, Model, get_model

from scievals.inputs import one_of
from scievals.scibench.dataset import Record, Source
from scievals.scibench.prompts import SKILLS, error_analysis_messages, to_chat, unit_sentence
from scievals.scibench.robust import last_boxed
from scievals.scibench.scorer import TOOL_STORE_KEY


def parse_category(text: str) -> int | None:
    """The skill number 1-10: the last \\boxed{}, else the last "category N"; None otherwise."""
    boxed = last_boxed(text)
    for candidate in (boxed, *re.findall(r"[Cc]ategory\s*(?:number\s*)?:?\s*(\d+)", text)[::-1]):
        if candidate is None:
            continue
        match = re.search(r"\d+", candidate)
        if match and 1 <= int(match.group(0)) <= 10:
            return int(match.group(0))
    return None


def _record(source: Source, meta: dict[str, Any], cache: dict[tuple[str, str], list[Record]]):
    pool, book, index = meta["pool"], meta["book"], int(meta["index"])
    if pool in ("img", "img_sol"):
        key = ("img", "")
        if key not in cache:
            cache[key] = source.multimodal()
        return next(r for r in cache[key] if r.pool == pool and r.index == index)
    key = (pool, book)
    if key not in cache:
        cache[key] = source.book(book, pool=pool)
    return cache[key][index]


async def _classify(verifier: Model, messages) -> str:
    output = await verifier.generate(to_chat(messages), config=GenerateConfig(temperature=0.0))
    return output.completion


def analyze_log(
    log_path: str | Path,
    verifier: str | Model,
    scorer: str = "robust",
    data_dir: str | None = None,
) -> dict[str, Any]:
    """Attribute each wrong answer that has a reference solution; distribution and items."""
    one_of("--scorer", scorer, ("faithful", "robust"))
    log = read_eval_log(str(log_path))
    task_args = log.eval.task_args or {}
    setting = str(task_args.get("setting", "zero"))
    source = Source(str(task_args.get("version", "main")), data_dir or task_args.get("data_dir"))
    model = verifier if isinstance(verifier, Model) else get_model(verifier)
    cache: dict[tuple[str, str], list[Record]] = {}
    jobs = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        meta = sample.metadata or {}
        if score is None or score.value == 1 or not meta.get("has_solution"):
            continue
        record = _record(source, meta, cache)
        reply = sample.output.completion if sample.output else ""
        stage1 = (sample.store or {}).get("stage1_reply")
        if stage1:
            reply = stage1 + "\n" + reply
        tool = setting if setting in ("python", "wolfram") else None
        runs = (sample.store or {}).get(TOOL_STORE_KEY) or {}
        tool_answer = str((runs.get("faithful") or {}).get("stdout"))
        problem = unit_sentence(record.problem_text, record.unit)
        messages = error_analysis_messages(problem, record.solution or "", reply, tool, tool_answer)
        jobs.append((str(sample.id), messages))

    async def run_all() -> list[str]:
        return list(await asyncio.gather(*(_classify(model, m) for _, m in jobs)))

    texts = asyncio.run(run_all()) if jobs else []
    items = []
    for (sample_id, _), text in zip(jobs, texts, strict=True):
        category = parse_category(text)
        skill = SKILLS[category - 1] if category else None
        items.append({"id": sample_id, "category": category, "skill": skill, "verifier_text": text})
    counts = Counter(i["skill"] or "unparsed" for i in items)
    return {
        "log": str(log_path),
        "model": log.eval.model,
        "setting": setting,
        "scorer": scorer,
        "verifier": str(model),
        "n": len(items),
        "distribution": {k: {"count": v, "share": v / len(items)} for k, v in counts.most_common()},
        "items": items,
        "note": "the paper found 81% of verifier labels correct on a spot-check (123/151)",
    }
