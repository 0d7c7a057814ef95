"""``scievals regrade`` of OpenCompass's SciBench output: folders written in its exact format,
re-graded through ``scievals grade scibench``'s code and compared with what it recorded.

How the format was established (OpenCompass is not installed: its package pulls torch and
mmengine): by reading its source, open-compass/opencompass,
- ``openicl/icl_inferencer/icl_base_inferencer.py``: ``GenInferencerOutputHandler.save_results``
  keeps ``{"origin_prompt", "prediction"}`` and ``"gold"`` when it is truthy, keyed ``str(idx)``;
  ``write_to_json`` dumps that dict with ``indent=4, ensure_ascii=False``;
- ``tasks/openicl_eval.py``: predictions are ``<work_dir>/predictions/<model_abbr>/<abbr>.json``
  or, for a split dataset, ``<abbr>_0.json``, ``<abbr>_1.json``, ... each keyed from "0", joined
  in order up to the first missing part; the result is ``results/<model_abbr>/<abbr>.json``,
  dumped with ``indent=4``; with ``dump_details`` it adds ``details`` ("0": {"prompt",
  "origin_prediction", "predictions", "references"}) and ``"type": "GEN"``;
- ``openicl/icl_evaluator/icl_hf_evaluator.py``: ``AccEvaluator`` gives ``{"accuracy": 100 *
  share}``, a prediction right when its string equals the reference's;
- ``configs/datasets/scibench/scibench_gen_2b21f3.py``: the abbrs ``scibench-<book>`` (zs) and
  ``scibench-<book>_<zs-cot|fs|fs-cot>``, one HUMAN turn (``[{"role": "HUMAN", "prompt": ...}]``
  for an API model, the rendered string for a base model); ``datasets/scibench.py``: the gold
  is ``answer_number.strip()``, the question ``problem_text.strip()``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from timing import must_end

from scievals.cli import main
from scievals.scibench import is_opencompass_output, opencompass
from scievals.scibench.dataset import Record, Source
from scievals.scibench.grade import GRADE_SCORERS, grade_file
from scievals.scibench.regrade.bounded import MAX_BYTES, Unreadable, parse
from scievals.scibench.regrade.grading import Library, choose, choose_version, grade
from scievals.scibench.regrade.layout import VARIANTS, load, read_source
from scievals.scibench.regrade.mapping import map_dataset
from scievals.scibench.units import official_unit

from .scibench_helpers import DATA, needs_data

pytestmark = needs_data
FEW_SHOT = "Problem 1: (OpenCompass's few-shot examples, lib_prompt/<book>_prompt.txt)\nAnswer: 1"


@pytest.fixture(autouse=True)
def _data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", str(DATA))


def book(name: str, version: str = "main") -> list[Record]:
    return Source(version, DATA).book(name)


def prompt(record: Record, prompt_type: str, api: bool = True) -> Any:
    """The prompt OpenCompass's config renders for one problem (``origin_prompt``)."""
    if prompt_type.startswith("zs"):
        variant = VARIANTS[prompt_type]
        text = opencompass.messages(variant, record.problem_text, record.book)[0].content  # type: ignore[arg-type]
    else:
        cue = "Answer: " if prompt_type == "fs" else "Explanation for Problem 6: "
        text = f"{FEW_SHOT}\n\nProblem 6: {opencompass.question(record.problem_text)}\n{cue}"
    return [{"role": "HUMAN", "prompt": text}] if api else text


def entry(record: Record, reply: str, prompt_type: str = "zs", api: bool = True) -> dict:
    """One prediction as ``save_results`` keeps it."""
    kept: dict[str, Any] = {"origin_prompt": prompt(record, prompt_type, api), "prediction": reply}
    if record.answer_number.strip():
        kept["gold"] = record.answer_number.strip()
    return kept


def dump(path: Path, value: Any) -> None:
    """As ``write_to_json`` (predictions) and ``mmengine.dump`` (results) write a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False), encoding="utf-8")


def write_predictions(folder: Path, abbr: str, entries: list[dict], parts: int = 1) -> None:
    size = -(-len(entries) // parts)
    for k in range(parts):
        chunk = entries[k * size : (k + 1) * size]
        name = f"{abbr}.json" if parts == 1 else f"{abbr}_{k}.json"
        dump(folder / name, {str(i): e for i, e in enumerate(chunk)})


def write_results(
    path: Path, entries: list[dict], details: bool, claims: dict[int, bool] | None = None
) -> None:
    """Its ``AccEvaluator``'s result for these predictions, ``details`` as ``format_details``
    writes them; ``claims`` edits a verdict (what another evaluator, or a hand, would record)."""
    extracted = [opencompass.extract(e["prediction"])[0] for e in entries]
    right = [x == e.get("gold") for x, e in zip(extracted, entries, strict=True)]
    for i, claim in (claims or {}).items():
        right[i] = claim
    result: dict[str, Any] = {"accuracy": 100 * sum(right) / len(entries)}
    if details:
        result["details"] = {
            str(i): {
                "prompt": e["origin_prompt"],
                "origin_prediction": e["prediction"],
                "predictions": x,
                "references": e.get("gold"),
                **({"correct": right[i]} if claims and i in claims else {}),
            }
            for i, (e, x) in enumerate(zip(entries, extracted, strict=True))
        }
        result["type"] = "GEN"
    dump(path, result)


# The scripted model's replies: (book, index) -> reply; every other problem is answered by
# turns with its gold boxed and with a wrong number.
SPECIAL = {
    ("atkins", 1): "Therefore, the answer is \\boxed{65.49}.",  # gold "+65.49": exact match
    ("atkins", 3): "The answer is \\boxed{67}. Checking again: \\boxed{12}",  # extraction
    ("atkins", 4): "The answer is 0",  # gold "0", no box: extraction
    ("atkins", 5): "The answer is \\boxed{-1200}.",  # wrong; its results file claims right
    ("chemmc", 1): "The answer is \\boxed{3.52}.",  # unit 10^{-19} J: scale
    ("chemmc", 10): "The answer is 6.6",  # unit 10^{-23}..., no box: extraction, not scale
    ("chemmc", 12): "Therefore, the answer is \\boxed{7 \\times 10^{-22}}.",  # its brace cut
    ("diff", 18): "The answer is \\boxed{89,034.79}.",  # gold "89,034.79": gold
}
EXPECTED_CAUSES = {
    ("atkins", 1): ("exact match", False, True),
    ("atkins", 3): ("extraction", True, False),
    ("atkins", 4): ("extraction", True, False),
    ("atkins", 5): ("recorded", True, False),
    ("chemmc", 1): ("scale", True, False),
    ("chemmc", 10): ("extraction", True, False),
    ("chemmc", 12): ("extraction", False, True),
    ("diff", 18): ("gold", True, False),
}


def expected_causes() -> dict[tuple[str, int], tuple[str, bool, bool]]:
    """``EXPECTED_CAUSES``, and each gold boxed as written where the official rule cannot
    agree: a unit carrying 10^k (the gold is the mantissa) or a gold float() cannot read."""
    found = dict(EXPECTED_CAUSES)
    for name in ("atkins", "chemmc", "diff"):
        for r in book(name):
            if r.index % 2 or (name, r.index) in SPECIAL:
                continue
            if r.answer_number.strip() in ("89,034.79", "\u22122", "\u22121.642876", "102,965.21"):
                found[(name, r.index)] = ("gold", True, False)
            elif official_unit(r.unit).rescaled:
                found[(name, r.index)] = ("scale", True, False)
    return found


def reply(record: Record) -> str:
    special = SPECIAL.get((record.book, record.index))
    if special is not None:
        return special
    if record.index % 2 == 0:
        return (
            f"Step by step... Therefore, the answer is \\boxed{{{record.answer_number.strip()}}}."
        )
    return "Therefore, the answer is \\boxed{123456.789}."


def experiment(root: Path) -> Path:
    """outputs/default/<timestamp>/: an API model on three books (results with details for
    atkins, accuracy alone for chemmc, none for diff), a base model on quan in two parts."""
    stamp = root / "20260101_120000"
    api = stamp / "predictions" / "scripted-api"
    for name in ("atkins", "chemmc", "diff"):
        entries = [entry(r, reply(r)) for r in book(name)]
        write_predictions(api, f"scibench-{name}", entries)
        if name != "diff":
            write_results(
                stamp / "results" / "scripted-api" / f"scibench-{name}.json",
                entries,
                details=name == "atkins",
                claims={5: True} if name == "atkins" else None,
            )
    base = [entry(r, reply(r), "zs-cot", api=False) for r in book("quan")]
    write_predictions(stamp / "predictions" / "scripted-base", "scibench-quan_zs-cot", base, 2)
    return stamp


def regrade(source: Path, *args: str) -> tuple[int, str, str]:
    """``scievals regrade`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["regrade", str(source), *args])
    return code, out.getvalue(), err.getvalue()


def test_comparison_names_each_cause(tmp_path):
    stamp = experiment(tmp_path)
    code, table, _ = regrade(stamp, "--out", str(tmp_path / "out"))
    assert code == 0
    result = json.loads((tmp_path / "out" / "regrade.json").read_text())
    api, base = result["runs"]
    assert (api["run"], base["run"]) == ("scripted-api zs", "scripted-base zs-cot")
    rows = {(r["book"], r["index"]): r for r in api["differing_problems"]}
    expected = expected_causes()
    assert {k: (r["cause"], r["source"], r["official"]) for k, r in rows.items()} == expected
    assert {("diff", 26), ("diff", 38), ("chemmc", 14)} <= set(expected)
    assert rows[("atkins", 5)]["source_from"] == "recorded"
    assert rows[("chemmc", 1)]["source_from"] == "rule"
    # the recorded score: atkins' and chemmc's results files (diff has none)
    atkins, chemmc = book("atkins"), book("chemmc")
    assert api["source"]["total"] == len(atkins) + len(chemmc)
    assert api["source"]["books"] == 2
    right = api["opencompass_rule"]["by_book"]["atkins"]["correct"]
    assert api["recorded_differences"] == [
        f"scibench-atkins: its results file records {100 * (right + 1) / len(atkins):g}% "
        f"({right + 1}/{len(atkins)}); OpenCompass's rule gives its predictions {right}/{len(atkins)}"
    ]
    assert base["source"] is None and base["graded"] == len(book("quan"))
    assert [b["files"] for b in base["books"]] == [
        [
            "predictions/scripted-base/scibench-quan_zs-cot_0.json",
            "predictions/scripted-base/scibench-quan_zs-cot_1.json",
        ]
    ]
    assert "scripted-api zs" in table and "not recorded" in table
    for (name, index), (kind, *_) in expected.items():
        assert any(
            line.split()[:2] == [name, str(index)] and f"  {kind}  " in line
            for line in table.splitlines()
        ), (name, index)
    print(table)


def test_verdicts_equal_grade_scibench(tmp_path):
    """Every verdict of the re-grade is the line ``scievals grade scibench`` writes."""
    stamp = experiment(tmp_path)
    source = read_source(stamp)
    library = Library(None)
    for n, run in enumerate(source.runs):
        load(run)
        books, mapping = choose_version(run, "auto", library)
        assert books.data.version == "main"
        graded = grade(choose(run, books, mapping, lambda _: None), books)
        jsonl = tmp_path / f"replies-{n}.jsonl"
        jsonl.write_text(
            "".join(
                json.dumps({"book": i.record.book, "index": i.record.index, "response": i.response})
                + "\n"
                for i in graded.items
            )
        )
        for scorer in GRADE_SCORERS:
            verdicts, _ = grade_file(jsonl, "main", scorer, str(DATA))
            assert [i.verdicts[scorer] for i in graded.items] == verdicts


MAPPING = [
    # (how the file differs from OpenCompass's, expected (index, how) of its first prediction)
    ("as written", (0, "order")),
    ("first problem left out", (1, "prompt")),
    ("no prompts kept, first left out", (1, "gold")),
    ("another dataset's prompt and gold", (None, "its prompt is none of OpenCompass's")),
    ("neither prompt nor gold, first left out", (None, "the file keeps neither")),
]


@pytest.mark.parametrize(("case", "expected"), MAPPING)
def test_mapping(case, expected):
    from scievals.scibench.regrade.layout import Dataset, Prediction

    records = book("atkins")
    chosen = records[1:] if "left out" in case else records
    predictions = []
    for i, r in enumerate(chosen):
        p = entry(r, "x")
        text = p["origin_prompt"][0]["prompt"]
        gold: str | None = p["gold"]
        if "another" in case:
            text, gold = f"Question: Janet has {i} ducks.\nAnswer:", str(i)
        if "no prompts" in case or "neither" in case:
            text = None
        if "neither" in case:
            gold = None
        predictions.append(Prediction(i, "x", text, gold))
    mapped = map_dataset(Dataset("scibench-atkins", "atkins", (), None, (), predictions), records)
    index, how = expected
    assert mapped[0].index == index
    assert mapped[0].how.startswith(how)


CHAT_TEMPLATE = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize("prompt_type", ["zs", "zs-cot", "fs", "fs-cot"])
@pytest.mark.parametrize("form", ["api turns", "base string", "chat template"])
def test_each_prompt_is_found_by_its_question(prompt_type, form):
    """A file that left its first problem out: each prediction is found by the question its
    prompt asks, in every prompt OpenCompass's config builds and every form it keeps it in."""
    from scievals.scibench.regrade.layout import Dataset, Prediction

    records = book("quan")
    predictions = []
    for i, r in enumerate(records[1:]):
        kept = prompt(r, prompt_type, api=form == "api turns")
        if form == "chat template":
            kept = CHAT_TEMPLATE.format(kept)
        text = "\n".join(t["prompt"] for t in kept) if isinstance(kept, list) else kept
        predictions.append(Prediction(i, "x", text, r.answer_number.strip()))
    dataset = Dataset("scibench-quan", "quan", (), None, (), predictions)
    mapped = map_dataset(dataset, records)
    assert [(m.index, m.how) for m in mapped] == [(i + 1, "prompt") for i in range(len(mapped))]


def test_old_data_chosen_when_it_fits(tmp_path):
    """OpenCompass's data bundle may be the paper-era SciBench: class has 47 problems there."""
    entries = [entry(r, reply(r)) for r in book("class", "old")]
    write_predictions(tmp_path / "m", "scibench-class", entries)
    (run,) = read_source(tmp_path / "m").runs
    load(run)
    books, mapping = choose_version(run, "auto", Library(None))
    assert books.data.version == "old"
    assert all(m.index == m.prediction.position for m in mapping["scibench-class"])


HOSTILE = [
    # (book, how the file is made, the line it gets)
    ("quan", "sparse 1 GiB", "1,073,741,824 bytes, over the 33,554,432-byte bound: skipped"),
    ("chemmc", "symlink out", "a symlink out of the folder (or a broken one): skipped"),
    ("class", "malformed", "not JSON (Expecting"),
    ("fund", "not UTF-8", "not UTF-8 (byte 14: invalid start byte): skipped"),
    ("matter", "nested", "JSON nested too deeply: skipped"),
    ("thermo", "many values", "over 1,000,000 JSON values: not a prediction file: skipped"),
    ("calculus", "a list", "not an OpenCompass prediction file (a JSON list"),
    ("diff", "FIFO", "not a regular file (a FIFO, device or socket): skipped"),
]


def hostile_folder(root: Path) -> Path:
    model = root / "predictions" / "m"
    entries = [entry(r, reply(r)) for r in book("atkins")]
    write_predictions(model, "scibench-atkins", entries)
    outside = root.parent / "secret.json"
    dump(outside, {"0": entry(book("chemmc")[0], "\\boxed{1}")})
    for name, how, _ in HOSTILE:
        path = model / f"scibench-{name}.json"
        if how == "sparse 1 GiB":
            with open(path, "wb") as fh:
                fh.truncate(1 << 30)
        elif how == "symlink out":
            path.symlink_to(outside)
        elif how == "malformed":
            path.write_text('{"0": {"prediction": "x", }')
        elif how == "not UTF-8":
            path.write_bytes(b'{"0": {"predic\xfftion": "x"}}')
        elif how == "nested":
            path.write_text("[" * 200_000 + "]" * 200_000)
        elif how == "many values":
            path.write_text("[" + "{}," * 1_100_000 + "{}]")
        elif how == "a list":
            path.write_text('[{"prediction": "x"}]')
        else:
            os.mkfifo(path)
    elsewhere = root.parent / "elsewhere"  # a model folder linked from outside
    write_predictions(elsewhere, "scibench-atkins", entries[:2])
    (root / "predictions" / "escaped").symlink_to(elsewhere)
    # another dataset's file under a SciBench name: a GSM8K prediction, graded nowhere
    gsm = {
        str(i): {"origin_prompt": f"Question: {i} apples?\nAnswer:", "prediction": "4", "gold": "4"}
        for i in range(3)
    }
    dump(model / "scibench-stat.json", gsm)
    dump(model / "gsm8k.json", gsm)
    (model / "scibench-stat\n_fs.json").write_text("{}")  # a name of two lines: still one line
    return root


def test_hostile_folder_fails_only_what_is_bad(tmp_path):
    root = hostile_folder(tmp_path / "exp")
    tracemalloc.start()
    with must_end("a hostile OpenCompass folder"):
        code, table, err = regrade(root)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert code == 0
    lines = err.splitlines()
    for name, _, said in HOSTILE:
        mine = [x for x in lines if f"scibench-{name}.json" in x]
        assert len(mine) == 1 and said in mine[0], (name, mine)
    assert "scievals regrade: predictions/escaped: a symlink out of the folder: skipped" in lines
    stat = [x for x in lines if "scibench-stat" in x and "other datasets" not in x]
    assert stat == [
        "scievals regrade: m zs: scibench-stat: none of its 3 predictions answers a stat problem "
        "(the first: its prompt is none of OpenCompass's SciBench prompts): a file of another "
        "dataset? not graded"
    ]
    assert any(
        "predictions/m: 2 files of other datasets: gsm8k, scibench-stat\\n_fs" in x for x in lines
    )
    assert "gsm8k" not in table
    row = table.splitlines()[1].split()
    assert row[:3] == ["m", "zs", f"{len(book('atkins'))}/{len(book('atkins')) + 3}"]
    assert peak < 4 * MAX_BYTES  # nothing decoded past a bound (json.loads of them: gigabytes)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("scibench-atkins.json", b"garbage", ": not JSON (Expecting value: line 1 column 1"),
        ("scibench-atkins.json", b"\xff{}", ": not UTF-8 (byte 0: invalid start byte)"),
        ("scibench-atkins.json", b'{"a": 1}', 'its keys are not "0", "1", ...'),
        ("results.json", b'{"0": {"prediction": "4"}}', "its name is not scibench-<book>"),
    ],
)
def test_a_file_that_is_not_what_it_claims_is_one_line(tmp_path, name, data, expected):
    path = tmp_path / name
    path.write_bytes(data)
    code, _, err = regrade(path)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"scievals: error: {path}") and expected in line


def test_is_opencompass_output(tmp_path):
    stamp = experiment(tmp_path / "default")
    scicode = tmp_path / "eval_results" / "generated_code" / "gpt-4o"
    scicode.mkdir(parents=True)
    (scicode / "1.1.py").write_text("x = 1\n")
    other = tmp_path / "pred.json"
    dump(other, {"0": {"origin_prompt": "q", "prediction": "4"}})
    cases = {
        tmp_path / "default": True,
        stamp: True,
        stamp / "predictions": True,
        stamp / "predictions" / "scripted-api": True,
        stamp / "predictions" / "scripted-api" / "scibench-atkins.json": True,
        other: True,  # by its content: a prediction file not named for SciBench
        tmp_path / "eval_results": False,
        scicode / "1.1.py": False,
        tmp_path / "missing": False,
    }
    assert {p: is_opencompass_output(p) for p in cases} == cases
    code, _, err = regrade(other)
    assert code == 2 and "its name is not scibench-<book>" in err


def test_gap_in_parts_and_results_refused(tmp_path):
    entries = [entry(r, reply(r)) for r in book("quan")]
    model = tmp_path / "predictions" / "m"
    write_predictions(model, "scibench-quan", entries, parts=3)
    (model / "scibench-quan_1.json").unlink()
    code, _, err = regrade(tmp_path)
    assert code == 0
    assert (
        "part 1 is missing, so its evaluator reads no part after it: 1 later parts skipped" in err
    )


def test_cli_end_to_end(tmp_path):
    """The installed command, as a user runs it: table on stdout, regrade.json in --out."""
    stamp = experiment(tmp_path)
    env = {**os.environ, "SCIEVALS_SCIBENCH_DIR": str(DATA)}
    command = [
        str(Path(sys.executable).parent / "scievals"),
        "regrade",
        str(stamp),
        "--out",
        str(tmp_path / "o"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split()[:3] == ["run", "graded", "source"]
    written = json.loads((tmp_path / "o" / "regrade.json").read_text())
    assert written["harness"] == "opencompass" and len(written["runs"]) == 2
    again = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"scievals: error: {tmp_path / 'o' / 'regrade.json'} exists: pass --overwrite to replace it"
    ]


def test_bounded_parse_refuses_before_decoding():
    with pytest.raises(Unreadable, match="JSON values"):
        parse(b"[" + b"0," * (1_000_001) + b"0]")
    assert parse(b'{"0": {"prediction": "\\"{[,"}}') == {"0": {"prediction": '"{[,'}}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "origin_prompt": JSON | st.text(),
        "prediction": JSON | st.text(),
        "gold": JSON | st.text(),
    },
)


DETAIL = st.fixed_dictionaries(
    {}, optional={"predictions": JSON | st.text(), "references": JSON, "correct": JSON}
)
RESULT = st.fixed_dictionaries(
    {},
    optional={
        "accuracy": JSON,
        "error": JSON,
        "details": st.dictionaries(st.text(max_size=3), DETAIL | JSON, max_size=4)
        | st.lists(DETAIL, max_size=4)
        | JSON,
    },
)
ANY_FILE = (
    st.binary(max_size=300)
    | JSON.map(lambda v: json.dumps(v).encode())
    | st.lists(ENTRY, max_size=4).map(
        lambda es: json.dumps({str(i): e for i, e in enumerate(es)}).encode()
    )
)


@settings(max_examples=80)
@given(ANY_FILE, ANY_FILE | RESULT.map(lambda r: json.dumps(r).encode()))
@example(b"{}", b'{"accuracy": Infinity}')
@example(
    b'{"0": {"prediction": "1"}}', b'{"accuracy": NaN, "details": {"\xc2\xb2": {"predictions": 1}}}'
)
def test_reader_is_total(predictions, results):
    """Any bytes as a prediction file and as its results file: a table or one-line errors,
    never a traceback."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for kind, data in (("predictions", predictions), ("results", results)):
            path = Path(folder) / kind / "m" / "scibench-atkins.json"
            path.parent.mkdir(parents=True)
            path.write_bytes(data)
        code, _, err = regrade(Path(folder))
    assert code in (0, 2)
    assert "Traceback" not in err


def test_lines_about_one_file_are_bounded(tmp_path):
    """30 entries without a gradable reply: 20 lines, then one that counts the rest."""
    entries = [entry(r, reply(r)) for r in book("atkins")]
    for e in entries[:30]:
        e["prediction"] = ["a", "b"]  # repeated samples
    write_predictions(tmp_path / "m", "scibench-atkins", entries)
    code, table, err = regrade(tmp_path / "m")
    assert code == 0
    about = [x for x in err.splitlines() if "scibench-atkins" in x]
    assert len(about) == 21
    assert about[0].endswith(
        "scibench-atkins #0: a list of 2 predictions (repeated samples): not graded"
    )
    assert about[-1].endswith("scibench-atkins: 10 more predictions not graded")
    assert f"{len(entries) - 30}/{len(entries)}" in table
