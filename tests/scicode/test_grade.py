"""``scievals grade scicode``: verdicts step by step, in the real sandbox, on dev steps.

Honest completions must get the verdict the official harness's rule gives: the official step
program (code file, then ``process_hdf5_to_tuple`` and the raw tests, as ``scicode/__main__.py``
writes it) is run here with the original package from the nvidia-scicode wheel and the same
targets, and its exit status is compared with ours. Cheating completions, which the official rule
lets pass, must fail.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from scievals.cli import main
from scievals.scicode.data.dataset import find_step, load_problems
from scievals.scicode.extract import extract_code, original_extract
from scievals.scicode.grade import InputError, grade, read_completions

from .conftest import gold, read_grade_output, write_jsonl


@pytest.fixture(autouse=True)
def _dev_targets(dev_targets_file):
    """Grading dev steps reads the regenerated targets (built once into the cache)."""
    return dev_targets_file


def _cli(tmp_path: Path, completions: dict[str, str], *options: str):
    source = write_jsonl(tmp_path / "completions.jsonl", completions)
    out = tmp_path / "verdicts.jsonl"
    code = main(["grade", "scicode", str(source), "--out", str(out), *options])
    assert code == 0
    return read_grade_output(out)


def fence(code: str, label: str = "python") -> str:
    return f"```{label}\n{code}\n```"


def gold_code(step_id: str) -> str:
    code = find_step(step_id, "dev")[1].gold_code
    assert code
    return code


# ---- the official harness (``official_runner`` in conftest.py), for differential verdicts -------


def _codes(completions: dict[str, str], extraction=extract_code) -> dict[str, str]:
    codes = {}
    for problem in load_problems("dev"):
        for step in problem.steps:
            text = completions.get(step.step_id, "")
            codes[step.step_id] = (
                extraction(text, step.function_header)
                if extraction is extract_code
                else extraction(text)
            )
    return codes


# ---- honest completions: the official verdict, and why ------------------------------------------

HONEST = {
    "1.1": (gold("1.1"), True, None),
    "3.1": (
        "Use the Gram-Schmidt process on the columns, normalising each one.",
        False,
        "syntax_error",
    ),
    "4.1": (fence("def ichol(A):\n    return np.zeros_like(A)"), False, "assertion"),
    "19.1": (gold("19.1"), True, None),
    "19.2": (fence("def n_tangle(psi):\n    return (abs(psi)\n"), False, "syntax_error"),
    "29.1": (gold("29.1"), True, None),
    "29.2": (
        fence("def inner_product(u, v):\n    raise ZeroDivisionError('boom')"),
        False,
        "exception",
    ),
    # 29.3 is gold, but runs 29.2's code: the official rule fails it too.
    "29.3": (gold("29.3"), False, "exception"),
    "38.1": (
        fence("def cross_product(a, b):\n    return np.cross(a, b)"),
        False,
        "missing_function",
    ),
    # 38.2 is gold but calls 38.1's missing ``cross``: an exception, not its own missing function.
    "38.2": (gold("38.2"), False, "exception"),
    # Several blocks: a draft then its fix (the fix runs), and a fix then a broken example.
    "70.1": (
        "Draft:\n"
        + fence("def pmns_mixing_matrix(s12, s23, s13, dCP):\n    return np.eye(3)")
        + "\nFixed:\n"
        + fence(gold_code("70.1")),
        True,
        None,
    ),
    "70.2": (
        "Solution:\n"
        + fence(gold_code("70.2"))
        + "\nExample:\n"
        + fence("print(hamiltonian_3nu(0.1,"),
        True,
        None,
    ),
    "78.1": (gold("78.1"), True, None),
}


@pytest.fixture(scope="module")
def honest_verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("honest")
    return _cli(tmp, {s: c for s, (c, _, _) in HONEST.items()})


@pytest.mark.parametrize("step", list(HONEST))
def test_honest_verdicts(honest_verdicts, step):
    verdicts, _ = honest_verdicts
    _, passed, kind = HONEST[step]
    verdict = verdicts[step]
    assert verdict["passed"] is passed, verdict
    assert verdict["reason_kind"] == kind, verdict
    if passed:
        assert verdict["reason"] is None


def test_honest_verdicts_match_official_rule(honest_verdicts, official_runner):
    verdicts, _ = honest_verdicts
    completions = {s: c for s, (c, _, _) in HONEST.items()}
    official = official_runner(list(HONEST), _codes(completions))
    assert official == {s: v["passed"] for s, v in verdicts.items()}


def test_honest_reasons(honest_verdicts):
    verdicts, _ = honest_verdicts
    assert verdicts["4.1"]["reason"] == "test 1: assertion failed: np.allclose(value[0], target)"
    assert verdicts["29.2"]["reason"].startswith("test 1: ZeroDivisionError: boom")
    assert "ZeroDivisionError" in verdicts["29.3"]["reason"]
    assert verdicts["38.1"]["reason"] == "test 1: NameError: name 'cross' is not defined"
    assert "NameError: name 'cross'" in verdicts["38.2"]["reason"]
    assert verdicts["3.1"]["reason"].startswith("SyntaxError")
    assert verdicts["19.2"]["reason"] == "SyntaxError: '(' was never closed (line 2)"


def test_summary(honest_verdicts):
    verdicts, summary = honest_verdicts
    assert list(verdicts) == [
        s for p in load_problems("dev") for s in (x.step_id for x in p.steps) if s in HONEST
    ]
    passed = sum(1 for _, ok, _ in HONEST.values() if ok)
    assert summary == {
        "graded_steps": len(HONEST),
        "total_subproblems_solved": passed,
        "percentage_subproblems_solved": pytest.approx(100 * passed / 50),
        "steps_counted": 50,
        "total_main_problems_solved": 1,  # problem 1 (one step); 19 and 78 not all given/passed
        "percentage_main_problems_solved": pytest.approx(100 / 15),
        "problems_counted": 15,
        "dataset": "original",
        "step_count": "official",
        "runtimes": ["2024"],
        "added_by_later_runtimes": {},
    }


# ---- cheating: the official rule lets these pass; ours must not ---------------------------------

WRONG_CROSS = "def cross(a, b):\n    return np.zeros(3)"
CHEATS = {
    "1.1": (
        fence(
            "import sys\n" + gold_code("1.1").replace("return x", "return 0 * x") + "\nsys.exit(0)"
        ),
        True,
    ),
    "3.1": (fence("import os\ndef GS(A):\n    return A\nos._exit(0)"), True),
    "4.1": (fence("def ichol(A):\n    return A\nraise SystemExit"), True),
    "19.1": (
        fence(
            "import numpy as np\nnp.allclose = lambda *a, **k: True\ndef tensor(*args):\n    return 0"
        ),
        True,
    ),
    # Replacing the recorder's hooks with do-nothing ones: the trusted side then sees no test.
    "29.1": (
        fence(
            "class Hooks:\n    def __getattr__(self, name):\n        return lambda *a: a[-1] if a else None\n"
            "__scievals__ = Hooks()\ndef normalize(v):\n    return v"
        ),
        False,
    ),
    "38.1": (
        fence(f"print('PASSED')\nprint('All tests passed')\n{WRONG_CROSS}\nprint('PASSED')"),
        False,
    ),
    # A self-checking test (no target): model code patches np.allclose and builtins first.
    "78.1": (
        fence(
            "import builtins\nimport numpy as np\nnp.allclose = lambda *a, **k: True\n"
            "np.isclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
            "builtins.print = lambda *a, **k: None\n"
            "def pendulum_derivs(state, t, g, L, beta, A, alpha):\n    return np.zeros(2)"
        ),
        True,
    ),
}


@pytest.fixture(scope="module")
def cheat_verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cheats")
    verdicts, _ = _cli(tmp, {s: c for s, (c, _) in CHEATS.items()})
    return verdicts


@pytest.mark.parametrize(
    "step",
    list(CHEATS),
    ids=[
        "sys-exit-0",
        "os-_exit-0",
        "raise-SystemExit",
        "patch-np-allclose",
        "override-recorder",
        "print-success-markers",
        "patch-numpy-and-builtins-self-checking",
    ],
)
def test_cheats_fail(cheat_verdicts, step):
    verdict = cheat_verdicts[step]
    assert verdict["passed"] is False, verdict
    if step in ("1.1", "3.1", "4.1"):
        assert verdict["reason_kind"] == "missing_record"
        assert verdict["reason"] == "test 1 did not run to its end (exited early)"
    elif step == "29.1":  # the fake hooks break the program's own tests: nothing is recorded
        assert verdict["reason"] == "AttributeError: 'str' object has no attribute 'array'"
    elif step == "78.1":
        assert verdict["reason"] == "test 1: AssertionError: Test Case 1 Failed"
    else:
        assert verdict["reason_kind"] == "assertion"


def test_cheats_would_pass_the_official_rule(official_runner):
    """Why the sandbox design matters: the same code passes the official exit-status rule."""
    completions = {s: c for s, (c, _) in CHEATS.items()}
    official = official_runner(list(CHEATS), _codes(completions))
    assert official == {s: official_passes for s, (_, official_passes) in CHEATS.items()}


def test_targets_file_unreachable_from_model_code(tmp_path, dev_targets_file):
    steal = (
        "import h5py, os, glob\n"
        f"PATHS = [{str(dev_targets_file)!r}, {str(dev_targets_file.resolve())!r}]"
        " + glob.glob(os.path.expanduser('~/.cache/scievals/**/*.h5'), recursive=True)"
        " + glob.glob('/tmp/**/*.h5', recursive=True)\n"
        "SEEN = []\n"
        "for p in PATHS:\n"
        "    try:\n"
        "        SEEN.append(open(p, 'rb').read(8))\n"
        "    except OSError:\n"
        "        pass\n"
        "print(SEEN)\n"
        "assert not SEEN, 'targets readable'\n"
        "def cross(a, b):\n"
        "    for p in PATHS:\n"
        "        try:\n"
        "            with h5py.File(p, 'r') as f:\n"
        "                return f['38.1/test1/var1'][()]\n"
        "        except OSError:\n"
        "            pass\n"
        "    return np.zeros(3)\n"
    )
    verdicts, _ = _cli(tmp_path, {"38.1": fence(steal)}, "--timeout", "60")
    verdict = verdicts["38.1"]
    assert verdict["passed"] is False
    assert verdict["reason_kind"] == "assertion", verdict  # not "targets readable", just wrong


def test_forged_records_do_not_pass_self_checking_step():
    """Model code writing begin and end events into the records file itself, then exiting: the
    trusted side re-runs the test, and the forged events hold no value for its call."""
    forge = fence(
        "import glob, json, os\nimport numpy as np\n"
        "def pendulum_derivs(state, t, g, L, beta, A, alpha):\n    return np.zeros(2)\n"
        "for path in glob.glob('scievals-records-*'):\n"
        "    with open(path, 'a') as fh:\n"
        "        for i in range(3):\n"
        "            fh.write(json.dumps({'e': 'begin', 't': i}) + '\\n')\n"
        "            fh.write(json.dumps({'e': 'end', 't': i}) + '\\n')\n"
        "os._exit(0)"
    )
    verdicts, _ = asyncio.run(grade({"78.1": forge}))
    assert verdicts[0]["passed"] is False
    assert verdicts[0]["reason_kind"] in (
        "exception",
        "unsupported",
        "missing_record",
        "invalid_record",
    )


def test_patched_numpy_internals_do_not_pass_self_checking_step():
    """Every numpy module's namespace is restored before each test, internals included."""
    patch = fence(
        "import numpy as np\nimport numpy.core.numeric as numeric\n"
        "numeric.isclose = lambda *a, **k: np.array([True])\n"
        "def pendulum_derivs(state, t, g, L, beta, A, alpha):\n    return np.zeros(2)"
    )
    verdicts, _ = asyncio.run(grade({"78.1": patch}))
    assert verdicts[0]["passed"] is False


# ---- options, the original extraction, timeouts ---------------------------------------------------


def test_original_extraction_matches_official_pipeline(tmp_path, official_runner):
    """--extraction original: first python block, label case-sensitive, imports stripped."""
    completions = {
        "1.1": fence(gold_code("1.1"), "Python"),  # label line kept: NameError 'Python'
        "70.1": HONEST["70.1"][0],  # draft then fix: the draft runs
        "70.2": HONEST["70.2"][0],
        "78.1": fence("import numpy as np\n" + gold_code("78.1")),  # import stripped, np from deps
    }
    verdicts, _ = _cli(tmp_path, completions, "--extraction", "original", "--split", "dev")
    assert {s: v["passed"] for s, v in verdicts.items()} == {
        "1.1": False,
        "70.1": False,
        "70.2": False,
        "78.1": True,
    }
    assert verdicts["1.1"]["reason"] == "NameError: name 'Python' is not defined"
    assert verdicts["70.1"]["reason_kind"] == "assertion"
    official = official_runner(list(completions), _codes(completions, original_extract))
    assert official == {s: v["passed"] for s, v in verdicts.items()}


def test_timeout(tmp_path):
    verdicts, _ = _cli(tmp_path, {"3.1": fence("while True:\n    pass")}, "--timeout", "3")
    assert verdicts["3.1"]["passed"] is False
    assert verdicts["3.1"]["reason_kind"] == "timeout"


def test_stdout_when_no_out(tmp_path, capsys):
    source = write_jsonl(tmp_path / "c.jsonl", {"1.1": "no code"})
    assert main(["grade", "scicode", str(source)]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert lines[0] == {
        "step": "1.1",
        "passed": False,
        "reason": "SyntaxError: invalid syntax (line 1)",
        "reason_kind": "syntax_error",
        "runtime": "2024",
        "runtimes": {
            "2024": {
                "passed": False,
                "reason": "SyntaxError: invalid syntax (line 1)",
                "reason_kind": "syntax_error",
                "seconds": 0.0,
            }
        },
    }
    assert lines[1]["summary"]["total_subproblems_solved"] == 0
    assert captured.err.strip().splitlines()[-1] == (
        "scicode (original, step count official, runtimes 2024): "
        "0/50 steps (0.0%), 0/15 main problems (0.0%); 1 graded"
    )


# ---- malformed input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"step": "1.1", "completion": "x"}\n{"step": "1.1"\n', "c.jsonl:2: expected"),
        ('\n\n{"step": "1.1"}\n', "c.jsonl:3: expected"),
        ('{"step": 1.1, "completion": "x"}\n', "c.jsonl:1: step and completion must be strings"),
        ('["1.1", "x"]\n', "c.jsonl:1: expected"),
        ('{"step": "13.6", "completion": "x"}\n', "steps not scored in split 'test': 13.6"),
        ('{"step": "99.1", "completion": "x"}\n', "steps not scored in split 'test': 99.1"),
    ],
    ids=["bad-json", "missing-key", "non-string", "not-an-object", "presupplied", "unknown-step"],
)
def test_malformed_input_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["grade", "scicode", str(path), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("scievals grade scicode: ")
    assert message in err[0]
    assert not (tmp_path / "o.jsonl").exists()


def test_missing_file_exit_2(tmp_path, capsys):
    assert main(["grade", "scicode", str(tmp_path / "absent.jsonl")]) == 2
    assert "absent.jsonl" in capsys.readouterr().err


def test_read_completions_refuses_a_step_given_twice(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"step": "1.1", "completion": "a"}\n\n{"step": "1.1", "completion": "b", "extra": 1}\n'
    )
    with pytest.raises(InputError) as info:
        read_completions(path)
    assert str(info.value) == (
        f"{path}:3: step 1.1 is given again (first on line 1); give each step once"
    )
    path.write_text('{"step": "1.1", "completion": "a"}\n{"step": "1.2", "completion": "b"}\n')
    assert read_completions(path) == {"1.1": "a", "1.2": "b"}
    with pytest.raises(InputError):
        path.write_text("{")
        read_completions(path)


def test_read_completions_names_the_line_of_invalid_utf8(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"step": "1.1", "completion": "a"}\n{"step": "1.2", "completion": "\xff"}\n')
    with pytest.raises(InputError) as info:
        read_completions(path)
    assert str(info.value).startswith(f"{path}:2: not valid UTF-8")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "params",
    [
        {"previous_steps": "gold"},
        {"prompt_protocol": "whole_problem"},
        {"agent": "react"},
    ],
    ids=["gold-previous", "whole-problem", "agent"],
)
def test_grade_refuses_protocols_it_cannot_honour(params):
    """Per-step completions after the model's own steps: the other protocols are the scorer's,
    refused in one line rather than graded as if they were not asked for."""
    with pytest.raises(InputError, match="graded by the task's scorer"):
        asyncio.run(grade({"1.1": "x = 1"}, split="dev", **params))
