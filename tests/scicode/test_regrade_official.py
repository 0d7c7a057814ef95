"""``scievals regrade`` on the official SciCode harness's generated-code folders.

The folders are written by the official generator itself: the ``Gencode`` class of the
nvidia-scicode wheel (``scicode/gen/gencode_json.py``, the SciCode scripts' generator with
repeated samples), run with a scripted model, its own extraction (``extract_python_script``) and
its own loader (``get_function_from_code``) when it reads earlier files back. The source's verdict
files are those the wheel's ``test_code`` writes after running every step file with the original
package and the same targets; one is then edited to claim what its folder does not earn. The
older scripts' layout (``<problem>.<k>.py``, a JSON of passing steps per problem) is the same
files renamed, with the verdict files that format gives.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import numpy as np
import pytest

from scievals.aio import run_sync
from scievals.artifacts import pip_wheel
from scievals.cli import main
from scievals.inputs import InputError
from scievals.paths import cache_dir
from scievals.scicode.data.dataset import (
    PRESUPPLIED_STEPS,
    SCICODE_WHEEL,
    SCICODE_WHEEL_SHA256,
    find_step,
    load_problems,
    official_file,
)
from scievals.scicode.extract import original_extract
from scievals.scicode.grade import grade, summary
from scievals.scicode.regrade.compare import Graded, compare, table
from scievals.scicode.regrade.official_folder import (
    MAX_STEP_BYTES,
    loaded,
    read_source,
    read_step_file,
    step_answers,
)

from .conftest import functions_from, official, official_source

MODEL = "scripted-a"
BG = "without_background"


# ---- the official generator, run with a scripted model ------------------------------------------


class _Script:
    """The scripted model: the reply the driver set for the step being generated."""

    reply = ""


@cache
def _gencode() -> type:
    """The wheel's ``Gencode`` class, its imports bound to the wheel's own functions."""
    parse = functions_from(
        official_source("scicode/parse/parse.py"),
        {"extract_function_name", "get_function_from_code"},
        {"ast": ast, "re": re},
    )

    @contextmanager
    def data_path(package: str, name: str) -> Iterator[Path]:
        """The official file the generator reads, from the verified copies in our cache."""
        assert package == "scicode.data"
        official_file(name)
        yield cache_dir("scicode", "data") / name

    namespace: dict[str, Any] = {
        **parse,
        "extract_python_script": official().extract_python_script,
        "get_model_function": lambda model, **kwargs: lambda prompt: _Script.reply,
        "resources": SimpleNamespace(path=data_path),
        "Path": Path,
        "re": re,
        "Optional": Optional,
        "DEFAULT_PROMPT_TEMPLATE": official_file("background_comment_template.txt").decode(),
    }
    tree = ast.parse(official_source("scicode/gen/gencode_json.py"))
    body = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Gencode"]
    exec(compile(ast.Module(body, []), "<gencode_json.py>", "exec"), namespace)
    return namespace["Gencode"]


def _raw_problems(split: str) -> dict[str, dict[str, Any]]:
    name = "problems_dev.jsonl" if split == "dev" else "problems_all.jsonl"
    lines = official_file(name).decode().splitlines()
    return {str(p["problem_id"]): p for p in map(json.loads, filter(None, lines))}


def generate(
    results: Path, replies: dict[str, str], split: str = "dev", model: str = MODEL
) -> Path:
    """``results/generated_code/<model>/without_background/`` as the official generator writes it
    for these replies, step by step in order (a new generator per call: a later call resumes,
    reading the earlier files back); returns that folder."""
    generator = _gencode()(
        model=model,
        output_dir=results / "generated_code",
        prompt_dir=results / "prompt",
        with_background=False,
    )
    raw = _raw_problems(split)
    for problem_id in dict.fromkeys(step.split(".")[0] for step in replies):
        problem = raw[problem_id]
        total = len(problem["sub_steps"])
        for index in range(total):
            step = f"{problem_id}.{index + 1}"
            if step in replies and step not in PRESUPPLIED_STEPS:
                _Script.reply = replies[step]
                generator.generate_response_with_steps(problem, index + 1, total, model)
    return results / "generated_code" / model / BG


def fence(code: str) -> str:
    return f"Here it is.\n\n```python\n{code}\n```\n"


def gold_code(step_id: str) -> str:
    code = find_step(step_id, "dev")[1].gold_code
    assert code
    return code


def gold(step_id: str) -> str:
    return fence(gold_code(step_id))


def wrong(step_id: str, split: str = "dev") -> str:
    """The step's own function, returning nothing useful."""
    header = find_step(step_id, split)[1].function_header
    return fence(f"{header}\n    return None")


def extracted(replies: dict[str, str]) -> dict[str, str]:
    """What the official generator keeps of each reply (the code its files end with)."""
    return {step: official().extract_python_script(r) for step, r in replies.items()}


def answers_of(folder: Path, split: str = "dev") -> dict[str, Any]:
    source = read_source(folder)
    (run,) = source.runs
    texts = {}
    for step, path in run.paths.items():
        text, why = read_step_file(path, source.root)
        assert why is None
        texts[step] = text
    found = {}
    for problem in load_problems(split):
        found.update(step_answers(problem, texts))
    return found


# ---- the reader -----------------------------------------------------------------------------------


def test_each_answer_is_what_the_generator_extracted(tmp_path):
    """Step k's file holds the dependencies, steps 1..k-1 and step k: its answer is step k's."""
    replies = {
        "29.1": gold("29.1"),
        "29.2": "Imports first:\n" + fence("import numpy as np\n" + gold_code("29.2")),
        "29.3": gold("29.3") + "\nand a stray ``` fence",
        "19.1": gold("19.1"),
        "19.2": wrong("19.2"),
        "10.1": gold("10.1"),
        "10.2": "```python\ndef broken(:\n```",
        "10.3": gold("10.3"),
    }
    folder = generate(tmp_path / "eval_results", replies)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{s}_0.py" for s in replies)
    found = answers_of(tmp_path / "eval_results")
    want = extracted(replies)
    assert {s: a.code for s, a in found.items()} == want
    assert not any(a.whole or a.earlier_differs for a in found.values())
    # the rule grade() applies keeps that code as it is
    assert all(original_extract(code) == code for code in want.values())


def test_a_resumed_generator_reads_earlier_steps_back(tmp_path):
    """Resumed, the generator reads step 1 back as its function alone (helper dropped): the
    answer of step 2 is still found, and step 1's code is named as different."""
    results = tmp_path / "eval_results"
    helper = "def _unit(v):\n    return v / np.linalg.norm(v)\n\n"
    first = {"29.1": fence(helper + gold_code("29.1"))}
    generate(results, first)
    later = {"29.2": gold("29.2"), "29.3": gold("29.3")}
    folder = generate(results, {**first, **later})
    assert "def _unit" in (folder / "29.1_0.py").read_text()
    assert "def _unit" not in (folder / "29.2_0.py").read_text()
    found = answers_of(results)
    assert {s: a.code for s, a in found.items()} == extracted({**first, **later})
    assert found["29.2"].earlier_differs == ("29.1",)
    assert found["29.3"].earlier_differs == ("29.1",)
    assert not found["29.1"].earlier_differs


def test_presupplied_steps_as_the_generator_reads_them(tmp_path):
    """13.6 is read back as its first ``__init__`` only (spec §1): named as different from the
    class scievals runs; 76.3 is read whole (unparsed: the same code)."""
    steps = [f"13.{k}" for k in range(1, 9)] + ["76.1", "76.2", "76.3", "76.4"]
    replies = {s: wrong(s, "test") for s in steps if s not in PRESUPPLIED_STEPS}
    generate(tmp_path / "eval_results", replies, split="test")
    found = answers_of(tmp_path / "eval_results", "test")
    assert {s: a.code for s, a in found.items()} == extracted(replies)
    assert found["13.7"].earlier_differs == ("13.6",)
    assert found["13.8"].earlier_differs == ("13.6",)
    assert not found["13.5"].earlier_differs
    assert not found["76.4"].earlier_differs
    assert not any(a.whole for a in found.values())


def test_loaded_is_the_official_loader():
    """``loaded`` keeps what the wheel's ``get_function_from_code`` keeps."""
    parse = functions_from(
        official_source("scicode/parse/parse.py"),
        {"extract_function_name", "get_function_from_code"},
        {"ast": ast, "re": re},
    )
    cases = [
        (s.presupplied_code, s.function_header) for p in load_problems("test") for s in p.steps
    ]
    cases = [c for c in cases if c[0] is not None]
    cases += [(s.gold_code, s.function_header) for p in load_problems("dev") for s in p.steps]
    cases.append(("def f(:\n", "def f(x):"))  # unparsable: the code whole
    for code, header in cases:
        name = parse["extract_function_name"](header)
        assert loaded(code, header) == parse["get_function_from_code"](code, name)
    assert loaded(official_file("13.6.txt").decode(), find_step("13.6")[1].function_header) == (
        parse["get_function_from_code"](official_file("13.6.txt").decode(), "__init__")
    )


def test_an_edited_file_is_graded_whole(tmp_path):
    results = tmp_path / "eval_results"
    folder = generate(results, {"29.1": gold("29.1"), "29.2": gold("29.2")})
    edited = folder / "29.2_0.py"
    deps = find_step("29.1", "dev")[0].dependencies
    body = "def extra():\n    return 1\n" + gold_code("29.1")
    edited.write_text(f"{deps}\n{body}\n\n{gold_code('29.2')}")
    found = answers_of(results)
    assert found["29.2"].whole
    assert found["29.2"].code.startswith("def extra():")
    assert not found["29.1"].whole


@pytest.mark.parametrize(
    "where", ["eval_results", "eval_results/generated_code", f"eval_results/generated_code/{MODEL}"]
)
def test_the_layout_is_found_from_any_of_its_folders(tmp_path, where):
    generate(tmp_path / "eval_results", {"1.1": gold("1.1")})
    source = read_source(tmp_path / where)
    assert [(r.model, r.background, r.sample, sorted(r.paths)) for r in source.runs] == [
        (MODEL, BG, 0, ["1.1"])
    ]


def test_older_layout_and_its_verdict_files(tmp_path):
    """``generated_code/<model>/<problem>.<k>.py`` and ``<model>.json``/``.txt``."""
    folder = tmp_path / "eval_results" / "generated_code" / "old"
    folder.mkdir(parents=True)
    (folder / "1.1.py").write_text("import numpy as np\n\n\ndef f():\n    pass\n")
    (folder.parent.parent / "old.json").write_text(json.dumps({"1": ["1.1"], "3": []}))
    (folder.parent.parent / "old.txt").write_text(
        "correct problems: 1/15\ncorrect steps: 1/50\n\nduration: 3.0 seconds\n\n"
        "correct problems: \n\n[1]\n"
    )
    (run,) = read_source(tmp_path / "eval_results").runs
    assert (run.model, run.background, run.sample) == ("old", None, None)
    assert run.recorded is not None
    assert run.recorded.passed == {"1.1"}
    assert (run.recorded.steps, run.recorded.problems) == ((1, 50), (1, 15))
    assert run.recorded.solved == {"1"}


def test_verdict_files_that_cannot_speak_for_a_run(tmp_path):
    results = tmp_path / "eval_results"
    generate(results, {"1.1": gold("1.1")})
    stem = results / f"{MODEL}_{BG}"
    stem.with_suffix(".json").write_text(
        json.dumps({"num_correct": {"1": {"1": 2}}, "n_samples": 2})
    )
    (run,) = read_source(results).runs
    assert run.recorded is None
    assert run.notes == [
        f"{stem.name}.json: its counts are over 2 samples together, not this run's (not used)"
    ]
    stem.with_suffix(".json").write_text("{not json")
    (run,) = read_source(results).runs
    assert run.recorded is None
    assert run.notes == [f"{stem.name}.json: not the harness JSON (not used)"]


def test_not_the_layout(tmp_path):
    afile = tmp_path / "eval_results.json"
    afile.write_text("{}")
    with pytest.raises(InputError, match=r"is not a folder: regrade reads"):
        read_source(afile)
    with pytest.raises(InputError, match=r"no such file or directory"):
        read_source(tmp_path / "absent")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / "sub" / "notes.py").write_text("x = 1")
    with pytest.raises(InputError, match=r"is not the official SciCode harness's generated code"):
        read_source(tmp_path / "empty")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "generated_code").symlink_to(tmp_path / "empty")
    with pytest.raises(InputError, match=r"its generated_code is a symlink out of the folder"):
        read_source(tmp_path / "linked")


def test_hostile_folder_fails_only_what_is_bad(tmp_path, capsys, dev_targets_file):
    """A symlink out of the folder (a file and a model folder), a 2 MiB file, a FIFO, bytes that
    are not UTF-8, files named for steps that do not exist: one line each, skipped; the good
    step is graded."""
    results = tmp_path / "eval_results"
    folder = generate(results, {"1.1": gold("1.1")})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("print('read me')\n")
    (folder / "3.1_0.py").symlink_to(outside / "secret.py")
    (folder.parent.parent / "escaped").symlink_to(outside, target_is_directory=True)
    (folder / "4.1_0.py").write_bytes(b"#" * (2 * MAX_STEP_BYTES))
    os.mkfifo(folder / "6.1_0.py")
    (folder / "7.1_0.py").write_bytes(b"\xff\xfe not utf-8")
    (folder / "99.1_0.py").write_text("x = 1")
    (folder / "1.7_0.py").write_text("x = 1")
    out = tmp_path / "out"
    assert main(["regrade", str(results), "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    label = f"{MODEL} ({BG}) sample 0"
    prefix = f"scievals regrade: {label}: generated_code/{MODEL}/{BG}/"
    expected = [
        "scievals regrade: generated_code/escaped: a symlink out of the folder: skipped",
        f"{prefix}1.7_0.py: no step 1.7 in SciCode: skipped",
        f"{prefix}3.1_0.py: a symlink out of the folder: skipped",
        f"{prefix}4.1_0.py: {2 * MAX_STEP_BYTES:,} bytes, over the {MAX_STEP_BYTES:,}-byte "
        "bound: skipped",
        f"{prefix}6.1_0.py: not a regular file: skipped",
        f"{prefix}7.1_0.py: not UTF-8 (invalid start byte): skipped",
        f"{prefix}99.1_0.py: no step 99.1 in SciCode: skipped",
    ]
    assert [line for line in err if "skipped" in line] == expected
    (run,) = json.loads((out / "regrade.json").read_text())["runs"]
    assert [(v["step"], v["passed"]) for v in run["verdicts"]] == [("1.1", True)]


def test_a_path_that_is_not_a_folder_is_one_line(tmp_path, capsys):
    afile = tmp_path / "generated_code.txt"
    afile.write_text("")
    assert main(["regrade", str(afile)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"scievals: error: {afile} is not a folder")


# ---- the comparison, on verdicts given ------------------------------------------------------------


def _compared(
    results: Path, recorded: dict[str, Any], verdicts: list[dict[str, Any]], split: str = "dev"
) -> dict[str, Any]:
    """The comparison of the run in ``results`` with ``recorded`` as its JSON verdict file, as
    if graded as ``verdicts``."""
    (results / f"{MODEL}_{BG}.json").write_text(json.dumps(recorded))
    source = read_source(results)
    (run,) = source.runs
    texts = {s: read_step_file(p, source.root)[0] for s, p in run.paths.items()}
    problems = load_problems(split)
    answers = {}
    for problem in problems:
        answers.update(step_answers(problem, texts))
    totals = summary(problems, {v["step"]: v for v in verdicts})
    graded = Graded(run, split, problems, answers, {}, verdicts, totals)
    return compare(graded, 300, source.root)


def _one_step(tmp_path: Path) -> Path:
    results = tmp_path / "eval_results"
    generate(results, {"1.1": gold("1.1")})
    return results


def _verdict(step: str, passed: bool, kind: str | None = None) -> dict[str, Any]:
    return {"step": step, "passed": passed, "reason": kind, "reason_kind": kind}


def test_causes_named(tmp_path):
    recorded = {"num_correct": {"1": {"1": 1}, "19": {"2": 1}, "78": {"3": 1}}, "n_samples": 1}
    comparison = _compared(_one_step(tmp_path), recorded, [_verdict("1.1", False, "timeout")])
    rows = {r["step"]: r for r in comparison["differing_steps"]}
    assert rows["1.1"]["cause"] == "timeout"
    assert rows["19.2"]["cause"] == "no file"
    assert rows["78.3"]["cause"] == "no file"
    assert comparison["difference"]["steps"] == -3
    printed = table([comparison]).splitlines()
    assert any(
        re.fullmatch(r"  1\.1 +pass +fail +timeout +timed out in scievals .*", line)
        for line in printed
    )


def test_a_presupplied_step_the_source_scored(tmp_path):
    recorded = {"num_correct": {"13": {"6": 1}}, "n_samples": 1}
    comparison = _compared(_one_step(tmp_path), recorded, [], split="test")
    (row,) = comparison["differing_steps"]
    assert (row["step"], row["cause"], row["scievals"]) == ("13.6", "pre-supplied", None)


def test_a_step_of_another_split(tmp_path):
    recorded = {"num_correct": {"1": {"1": 1}, "2": {"1": 1}}, "n_samples": 1}
    comparison = _compared(_one_step(tmp_path), recorded, [_verdict("1.1", True)])
    (row,) = comparison["differing_steps"]
    assert (row["step"], row["cause"]) == ("2.1", "not in split")


def test_causes_in_the_folder(tmp_path):
    """Earlier code the generator read back otherwise (a resumed run), a file whose beginning
    is not the generator's, and a dev step whose official targets differ."""
    results = tmp_path / "eval_results"
    helper = "def _unit(v):\n    return v / np.linalg.norm(v)\n\n"
    generate(results, {"29.1": fence(helper + gold_code("29.1"))})
    generate(results, {"29.1": "", "29.2": gold("29.2"), "29.3": gold("29.3")})
    generate(results, {s: gold(s) for s in ("78.1", "78.2", "78.3")})
    edited = results / "generated_code" / MODEL / BG / "29.3_0.py"
    edited.write_text("# edited\n" + edited.read_text())
    recorded = {"num_correct": {"29": {"1": 1}, "78": {"1": 1, "2": 1}}, "n_samples": 1}
    steps = ["29.1", "29.2", "29.3", "78.1", "78.2", "78.3"]
    comparison = _compared(results, recorded, [_verdict(s, True) for s in steps])
    rows = {r["step"]: (r["source"], r["cause"]) for r in comparison["differing_steps"]}
    assert rows == {
        "29.2": (False, "earlier code"),
        "29.3": (False, "layout"),
        "78.3": (False, "targets"),
    }


# ---- the whole command, against the official harness's own verdicts ------------------------------


@pytest.fixture(scope="module")
def official_tester(tmp_path_factory, dev_targets_file):
    """The wheel's ``test_code`` (its ``scicode`` command's grader), run as it runs: each step
    file plus its tests in ``python``, with the original package and these targets."""
    from scievals.sandbox.runtime import ensure_runtime

    root = tmp_path_factory.mktemp("official_package")
    wheel = pip_wheel(SCICODE_WHEEL, SCICODE_WHEEL_SHA256)
    with zipfile.ZipFile(wheel) as zf:
        members = [
            m
            for m in zf.namelist()
            if m.startswith(("scicode/parse/", "scicode/compare/"))
            or m in ("scicode/__init__.py", "scicode/data/__init__.py")
        ]
        zf.extractall(root, members)
    data = root / "h5"
    data.mkdir()
    (data / "test_data.h5").symlink_to(dev_targets_file)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "python"  # the scoring runtime's interpreter, as `python` on PATH
    shim.write_text(f'#!/bin/sh\nexec {ensure_runtime().python} "$@"\n')
    shim.chmod(0o755)
    main_source = official_source("scicode/__main__.py")
    namespace = functions_from(
        main_source,
        {"test_code", "_get_background_dir", "estimate_pass_at_k"},
        {
            "defaultdict": defaultdict,
            "Path": Path,
            "time": time,
            "subprocess": subprocess,
            "shutil": shutil,
            "np": np,
            "partial": partial,
            "ThreadPoolExecutor": ThreadPoolExecutor,
            "Optional": Optional,
            "json": json,
        },
    )
    dev = list(_raw_problems("dev").values())

    def run(results: Path, model: str) -> None:
        saved = os.getcwd(), dict(os.environ)
        os.environ.update(
            PATH=f"{bin_dir}:{os.environ.get('PATH', '')}",
            PYTHONPATH=str(root),
            DATA_CACHE_DIR=str(data),
        )
        os.chdir(results.parent)
        try:
            namespace["test_code"](
                model,
                results / "generated_code",
                results.parent / "logs",
                results,
                dev,
                eval_threads=2,
            )
        finally:
            os.chdir(saved[0])
            os.environ.clear()
            os.environ.update(saved[1])

    return run


REPLIES = {
    "1.1": wrong("1.1"),
    "19.1": gold("19.1"),
    "29.1": gold("29.1"),
    "29.2": wrong("29.2"),
    "29.3": gold("29.3"),
}
"""19.2 is never generated (no file); 29.3 fails with 29.2's wrong code before it."""


@pytest.fixture(scope="module")
def regraded(tmp_path_factory, official_tester):
    """Two models' folders: the newer layout as generated, with the verdicts the official
    tester wrote edited to claim 1.1 (wrong) and 19.2 (no file); and problem 29's files in the
    older layout with honest verdict files in that format."""
    tmp = tmp_path_factory.mktemp("regrade")
    results = tmp / "eval_results"
    folder = generate(results, REPLIES)
    official_tester(results, MODEL)
    verdict_file = results / f"{MODEL}_{BG}.json"
    honest = json.loads(verdict_file.read_text())
    claimed = json.loads(json.dumps(honest))
    claimed["num_correct"].setdefault("1", {})["1"] = 1
    claimed["num_correct"].setdefault("19", {})["2"] = 1
    claimed["steps_pass@1"] += 2 / 50
    verdict_file.write_text(json.dumps(claimed))

    older = results / "generated_code" / "scripted-b"
    older.mkdir()
    for path in folder.glob("29.*_0.py"):
        shutil.copyfile(path, older / path.name.replace("_0.py", ".py"))
    passed_29 = [f"29.{k}" for k, n in honest["num_correct"].get("29", {}).items() if n]
    (results / "scripted-b.json").write_text(json.dumps({"29": passed_29}))
    (results / "scripted-b.txt").write_text(
        f"correct problems: 0/15\ncorrect steps: {len(passed_29)}/50\n\n"
        "duration: 1.0 seconds\n\ncorrect problems: \n\n[]\n"
    )

    out = tmp / "out"
    started = time.perf_counter()
    code = main(["regrade", str(results), "--out", str(out)])
    seconds = time.perf_counter() - started
    comparison = json.loads((out / "regrade.json").read_text())
    return SimpleNamespace(
        code=code, honest=honest, comparison=comparison, seconds=seconds, results=results
    )


def _official_passes(honest: dict[str, Any]) -> dict[str, bool]:
    counts = honest["num_correct"]
    return {s: bool(counts.get(s.split(".")[0], {}).get(s.split(".")[1], 0)) for s in REPLIES}


@pytest.mark.slow
def test_regrade_equals_grade_and_the_official_harness(regraded):
    assert regraded.code == 0
    run_a, run_b = regraded.comparison["runs"]
    assert run_a["run"] == f"{MODEL} ({BG}) sample 0"
    assert run_b["run"] == "scripted-b"
    ours = {v["step"]: v for v in run_a["verdicts"]}
    # the official harness's own verdicts, before the edit, are the official rule's
    assert {s: v["passed"] for s, v in ours.items()} == _official_passes(regraded.honest)
    # and grade() on the same completions (the code the generator extracted) gives the same
    verdicts, _ = run_sync(grade(extracted(REPLIES), split="dev", extraction="original"))
    assert [(v["step"], v["passed"], v["reason_kind"]) for v in verdicts] == [
        (v["step"], v["passed"], v["reason_kind"]) for v in run_a["verdicts"]
    ]
    assert {v["step"]: v["passed"] for v in run_b["verdicts"]} == {
        s: ours[s]["passed"] for s in ("29.1", "29.2", "29.3")
    }


@pytest.mark.slow
def test_the_comparison_names_what_differs(regraded, capsys):
    run_a, run_b = regraded.comparison["runs"]
    rows = {r["step"]: (r["source"], r["scievals"], r["cause"]) for r in run_a["differing_steps"]}
    assert rows == {"1.1": (True, False, None), "19.2": (True, None, "no file")}
    assert run_a["difference"]["steps"] == -2
    assert run_a["differing_problems"] is None  # nvidia-scicode lists no solved problems
    assert run_b["differing_steps"] == []
    assert run_b["difference"] == {"steps": 0, "percentage_points": 0.0, "problems": 0}
    print(f"\n{table(regraded.comparison['runs'])}\n(regrade: {regraded.seconds:.1f} s)")
