"""SciBench data: the ten textbooks (test problems and the solution pool), tool examples, images.

Data comes from a local folder laid out like the official repository (``--data-dir`` /
``SCIEVALS_SCIBENCH_DIR``), or is fetched once into the cache from the repository's raw files, or
(main, textbook only) from the Hugging Face copy with its 112 solution rows dropped. The solution
pool (``<book>_sol.json``) is loaded only as few-shot and error-analysis material, never as a test.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

from scievals.artifacts import ArtifactError, download
from scievals.inputs import InputError, one_of
from scievals.paths import cache_dir

BOOKS = (
    "atkins",
    "calculus",
    "chemmc",
    "class",
    "diff",
    "fund",
    "matter",
    "quan",
    "stat",
    "thermo",
)
SUBJECTS = {
    "atkins": "chemistry",
    "chemmc": "chemistry",
    "quan": "chemistry",
    "matter": "chemistry",
    "fund": "physics",
    "class": "physics",
    "thermo": "physics",
    "diff": "math",
    "stat": "math",
    "calculus": "math",
}
Version = Literal["main", "old"]
VERSIONS: tuple[Version, ...] = get_args(Version)
TEST_COUNTS = {"main": 580, "old": 583}
MULTIMODAL_DIRS = {"problem": 151, "problem_solution": 26}
ENV_VAR = "SCIEVALS_SCIBENCH_DIR"
GITHUB_RAW = "https://raw.githubusercontent.com/mandyyyyii/scibench/{branch}/dataset/{path}"
HF_ROWS = (
    "https://datasets-server.huggingface.co/rows?dataset=xw27/scibench&config=default"
    "&split=train&offset={offset}&length=100"
)
HOW_TO_POINT = (
    f"point at a local copy with --data-dir DIR (task parameter data_dir) or {ENV_VAR}=DIR, "
    "where DIR is laid out like the official repository (DIR/dataset/original/<book>.json)"
)


@dataclass(frozen=True)
class Record:
    """One SciBench problem, with where it came from (``pool``: test, sol, img, img_sol)."""

    book: str
    index: int
    pool: str
    problem_text: str
    answer_number: str
    unit: str
    answer_latex: str = ""
    problemid: str = ""
    solution: str | None = None
    image: Path | None = None

    @property
    def subject(self) -> str:
        return SUBJECTS.get(self.book, "unknown")

    @property
    def sample_id(self) -> str:
        prefix = {"test": "", "sol": "sol-", "img": "img-", "img_sol": "imgsol-"}[self.pool]
        return (
            f"{prefix}{self.book}-{self.index}"
            if self.pool in ("test", "sol")
            else (f"{prefix}{self.index}")
        )


def _record(raw: dict[str, Any], book: str, index: int, pool: str, image: Path | None = None):
    return Record(
        book=book,
        index=index,
        pool=pool,
        problem_text=raw["problem_text"],
        answer_number=raw["answer_number"],
        unit=raw["unit"],
        answer_latex=raw.get("answer_latex", ""),
        problemid=raw.get("problemid", ""),
        solution=raw.get("solution"),
        image=image,
    )


class Source:
    """Where the files of one data version live: a local folder, or the cache filled on demand."""

    def __init__(self, version: str = "main", data_dir: str | Path | None = None) -> None:
        self.version = cast(Version, one_of("version", version, VERSIONS))
        local = data_dir or os.environ.get(ENV_VAR)
        self.local = _version_folder(Path(local).expanduser(), self.version) if local else None
        self.root = self.local or cache_dir("scibench", self.version)

    def path(self, relative: str) -> Path:
        """``dataset/<relative>`` as a local file, fetching it into the cache when not local."""
        target = self.root / "dataset" / relative
        if target.exists():
            return target
        if self.local is not None:
            raise FileNotFoundError(f"{target} is missing from the SciBench copy at {self.local}")
        try:
            return download(GITHUB_RAW.format(branch=self.version, path=relative), target)
        except ArtifactError as github_error:
            if self.version == "main" and relative.startswith("original/"):
                name = relative.removeprefix("original/")
                if name.removesuffix(".json") in BOOKS:
                    return self._from_hugging_face(name, target, github_error)
            raise ArtifactError(
                f"SciBench data unavailable ({github_error}); {HOW_TO_POINT}"
            ) from (github_error)

    def _from_hugging_face(self, name: str, target: Path, cause: Exception) -> Path:
        """A test ``<book>.json`` rebuilt from the HF rows, dropping the solution-pool rows."""
        try:
            rows = _hugging_face_rows()
        except ArtifactError as exc:
            raise ArtifactError(
                f"SciBench data unavailable (GitHub: {cause}; Hugging Face: {exc}); {HOW_TO_POINT}"
            ) from exc
        book = name.removesuffix(".json")
        tests = [r for r in rows if r.get("source") == book and not (r.get("solution") or "")]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(tests, ensure_ascii=False), encoding="utf-8")
        return target

    def book(self, book: str, pool: str = "test") -> list[Record]:
        """The test problems (pool "test") or the solution pool (pool "sol") of one textbook."""
        if book not in BOOKS:
            raise InputError(f"unknown SciBench book {book!r}; books are {', '.join(BOOKS)}")
        name = f"original/{book}.json" if pool == "test" else f"original/{book}_sol.json"
        raw = json.loads(self.path(name).read_text(encoding="utf-8"))
        return [_record(item, book, i, pool) for i, item in enumerate(raw)]

    def tool_code(self, tool: str, book: str, index: int) -> str:
        """The official tool example ``original/<python|wolfram>/<book>_<index>.txt``."""
        return self.path(f"original/{tool}/{book}_{index}.txt").read_text(encoding="utf-8")

    def multimodal(self) -> list[Record]:
        """The 177 image problems: ``img/problem/<n>`` (151), ``img/problem_solution/<n>`` (26)."""
        records = []
        for folder, count in MULTIMODAL_DIRS.items():
            pool = "img" if folder == "problem" else "img_sol"
            for n in range(count):
                raw = json.loads(self.path(f"img/{folder}/{n}/data.json").read_text("utf-8"))
                image = self.path(f"img/{folder}/{n}/img_question.png")
                records.append(_record(raw, raw["source"].strip(), n, pool, image))
        return records

    def describe(self) -> str:
        """The data version with how it was obtained, for the protocol record."""
        return self.version if self.local is None else f"{self.version} (local {self.local})"


def _version_folder(path: Path, version: str) -> Path:
    """Accept either a version folder (has dataset/) or a parent holding main/ and old/."""
    if (path / version / "dataset").is_dir():
        path = path / version
    if not (path / "dataset" / "original").is_dir():
        raise FileNotFoundError(f"{path} is not a SciBench copy; {HOW_TO_POINT}")
    found = detect_version(path)
    if found is not None and found != version:
        raise InputError(
            f"{path} holds the {found!r} SciBench data ({TEST_COUNTS[found]} test problems), "
            f"not {version!r}; point at the {version} copy or pass version={found}"
        )
    return path


def detect_version(path: Path) -> str | None:
    """main or old by the number of test problems in a complete local copy (None: can't tell)."""
    total = 0
    for book in BOOKS:
        file = path / "dataset" / "original" / f"{book}.json"
        if not file.exists():
            return None
        total += len(json.loads(file.read_text(encoding="utf-8")))
    return next((v for v, n in TEST_COUNTS.items() if n == total), None)


def _hugging_face_rows() -> list[dict[str, Any]]:
    """All rows of ``xw27/scibench`` (train, 692 rows) through the datasets-server API, cached."""
    rows: list[dict[str, Any]] = []
    folder = cache_dir("scibench", "hf-xw27")
    offset = 0
    while True:
        page = download(HF_ROWS.format(offset=offset), folder / f"rows-{offset}.json")
        data = json.loads(page.read_text(encoding="utf-8"))
        rows += [item["row"] for item in data.get("rows", [])]
        offset += 100
        if offset >= int(data.get("num_rows_total", 0)):
            return rows
