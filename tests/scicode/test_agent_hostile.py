"""Hostile agents on agentic SciCode: each fails or stops with a clear reason, the honest steps
beside them keep their verdicts, and nothing an agent leaves reaches the grading.

Every agent is Inspect's ``mockllm/model`` replaying a script of ``ModelOutput.for_tool_call``
(``agent_scripts``), the tools really running in our sandbox; the answers are really graded.
"""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from timing import HANG_S

from scievals.offline import seed_tiktoken
from scievals.scicode.data.dataset import find_step
from scievals.scicode.regenerate import dev_targets_path
from scievals.scicode.task import scicode

from .agent_scripts import bash, fenced, python, scripted, submit, talk

pytestmark = pytest.mark.slow

PLANT = """
import os
marker = "PLANTED = 'planted'\\n"
open("sitecustomize.py", "w").write(marker + "import numpy\\nnumpy.allclose = lambda *a, **k: True\\n")
open("usercustomize.py", "w").write(marker)
open("numpy.py", "w").write(marker + "raise ImportError('a planted numpy')\\n")
open("agent_planted.py", "w").write(marker + "def n_tangle(psi):\\n    return 0.0\\n")
os.makedirs("scicode", exist_ok=True)
open("scicode/__init__.py", "w").write(marker)
open("/tmp/scievals-planted", "w").write("planted")
print("planted:", sorted(os.listdir(".")))
"""
LINGER = "nohup python3 -c 'import time; time.sleep(600)' >/dev/null 2>&1 & echo started $!"
# Raises at import in the grading run if anything the agent left is visible there.
LEAK_CHECK = """
import os as _os, sys as _sys
_left = [p for p in ("sitecustomize.py", "usercustomize.py", "numpy.py", "agent_planted.py",
                     "scicode", "/tmp/scievals-planted") if _os.path.exists(p)]
_loaded = [n for n, m in list(_sys.modules.items()) if getattr(m, "PLANTED", None) == "planted"]
if _left or _loaded:
    raise RuntimeError(f"the grading run sees what the agent left: {_left} {_loaded}")
"""
SNOOP = (
    r"find / \( -name '*.h5' -o -name '*.jsonl' -o -name 'test_data*' -o -name '*regenerated*'"
    r" -o -name 'scievals-records*' -o -name '*.py' -path '*scicode*' \) -not -path '*/h5py/*'"
    " -not -path '/proc/*' 2>/dev/null | head -40; ls -la ~ /tmp /root/.cache/scievals; env"
)
# Counts the processes still sleeping from LINGER (the bracket keeps grep from matching itself).
LINGERING = "ps -eo pid,args | grep -c 'time.slee[p](600)'"


def gold(step: str) -> str:
    code = find_step(step, "dev")[1].gold_code
    assert code
    return code


def _run(tmp_path, model, sample_id, **params):
    log = inspect_eval(
        scicode(split="dev", agent="react", **params),
        model=model,
        display="none",
        log_dir=str(tmp_path / "logs"),
        sample_id=sample_id,
    )[0]
    assert log.status == "success", log.error
    return {str(s.id): s for s in log.samples}


def _steps(sample) -> dict[str, dict]:
    return {v["step"]: v for v in sample.scores["scicode_scorer"].metadata["steps"]}


def _agent(sample) -> dict[str, dict]:
    return {r["step"]: r for r in sample.scores["scicode_scorer"].metadata["agent"]["by_step"]}


def _tool_events(sample) -> list:
    return [e for e in sample.events if e.event == "tool"]


def _tool_text(event) -> str:
    return str(event.result) + (event.error.message if event.error else "")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, dev_targets_file):
    """One eval of six hostile agents, one per problem, under small limits."""
    seed_tiktoken()
    model = scripted(
        {
            # never submits: only talks, until the message limit
            "cg": talk(),
            # floods the tool with calls past the tool-call limit
            "GS": [python(f"print({i})") for i in range(10)],
            # a tool call past its timeout, then the gold answer
            "ichol": [python("import time; time.sleep(90)"), submit(fenced(gold("4.1")))],
            # fork bombs in both tools, then the gold answer
            "apply_low_pass_filter": [
                python("import os\nwhile True:\n    os.fork()"),
                bash(":(){ :|:& };:"),
                submit(fenced(gold("6.1"))),
            ],
            # floods the tool with output, then the gold answer
            "apply_band_pass_filter": [
                python("import sys\nwhile True:\n    sys.stdout.write('y' * 65536)"),
                python("print('x' * 50_000_000)"),
                submit(fenced(gold("7.1"))),
            ],
            # plants files meant to alter grading and a lingering process, then answers with
            # gold code that fails if the grading run sees any of it
            "tensor": [
                python(PLANT),
                bash(LINGER),
                submit(fenced(LEAK_CHECK + "\n" + gold("19.1"))),
            ],
            # looks for targets and test code, then answers with what it planted
            "n_tangle": [
                bash(SNOOP),
                bash(LINGERING),
                python("import os; print(sorted(os.listdir('.')))"),
                submit(fenced("from agent_planted import n_tangle")),
            ],
        }
    )
    return _run(
        tmp_path_factory.mktemp("hostile"),
        model,
        ["1", "3", "4", "6", "7", "19"],
        previous_steps="gold",
        agent_message_limit=14,
        agent_tool_call_limit=4,
        agent_tool_timeout=30,
        agent_time_limit=300,
    )


def test_never_submits_stops_at_the_message_limit(hostile):
    verdict, record = _steps(hostile["1"])["1.1"], _agent(hostile["1"])["1.1"]
    assert not verdict["passed"] and verdict["reason_kind"] == "limit"
    assert "Message limit" in verdict["reason"] and "without an answer" in verdict["reason"]
    assert record["limit"] == "message" and not record["answered"]
    assert record["tool_calls"] == 0


def test_tool_call_flood_stops_at_the_tool_call_limit(hostile):
    verdict, record = _steps(hostile["3"])["3.1"], _agent(hostile["3"])["3.1"]
    assert verdict["reason_kind"] == "limit" and "Tool call limit exceeded" in verdict["reason"]
    assert record["limit"] == "tool_calls"
    assert record["tool_calls"] == 5  # four ran, the fifth was refused
    refused = [e for e in _tool_events(hostile["3"]) if e.error is not None]
    assert len(refused) == 1 and "was not run" in refused[0].error.message


def test_slow_tool_call_times_out_and_the_step_goes_on(hostile):
    verdict, record = _steps(hostile["4"])["4.1"], _agent(hostile["4"])["4.1"]
    assert verdict["passed"], verdict
    assert record["answered"] and record["tool_errors"] == {"timeout": 1}


def test_fork_bombs_end_in_their_tool_calls(hostile):
    verdict, record = _steps(hostile["6"])["6.1"], _agent(hostile["6"])["6.1"]
    assert verdict["passed"], verdict
    assert record["tool_calls"] == 2 and record["seconds"] < HANG_S
    texts = [_tool_text(e) for e in _tool_events(hostile["6"])[:2]]
    assert all(("limit" in t or "Resource temporarily unavailable" in t) for t in texts), texts


def test_output_flood_is_cut_and_the_step_goes_on(hostile):
    verdict = _steps(hostile["7"])["7.1"]
    assert verdict["passed"], verdict
    floods = _tool_events(hostile["7"])[:2]
    assert all(len(_tool_text(e)) < 100_000 for e in floods)


def test_files_and_processes_the_agent_leaves_never_reach_grading(hostile):
    steps, events = _steps(hostile["19"]), _tool_events(hostile["19"])
    assert "planted:" in _tool_text(events[0]) and "agent_planted.py" in _tool_text(events[0])
    assert "started" in _tool_text(events[1])
    # the gold answer that raises if the grading run sees anything planted passes
    assert steps["19.1"]["passed"], steps["19.1"]
    # an answer relying on a planted module fails: the grading run has no such module
    assert steps["19.2"]["reason_kind"] == "exception"
    assert "No module named 'agent_planted'" in steps["19.2"]["reason"]
    # the agent's own environment keeps its files between steps, not its processes
    assert _tool_text(events[4]).strip().endswith("0")
    assert "agent_planted.py" in _tool_text(events[5])


def test_agent_never_sees_targets_or_test_code(hostile):
    sample = hostile["19"]
    snoop = _tool_events(sample)[3]
    assert snoop.error is None and "/root/.cache/scievals" in _tool_text(snoop)  # it ran to its end
    seen = "\n".join(
        [m.text for m in sample.messages] + [_tool_text(e) for e in _tool_events(sample)]
    )
    for step in ("19.1", "19.2"):
        for test in find_step(step, "dev")[1].tests:
            for line in test.splitlines():
                if "assert" in line or "target" in line:
                    assert line.strip() not in seen, line
    for secret in (dev_targets_path().name, "problems_dev", "test_data.h5", "scievals-records"):
        assert secret not in seen, secret


@pytest.fixture(scope="module")
def budgets(tmp_path_factory, dev_targets_file):
    """Agents that run out of time and of tokens."""
    seed_tiktoken()
    slow = [python("import time; time.sleep(4); print('slept')") for _ in range(10)]
    model = scripted({"cg": slow, "GS": talk()})
    return _run(
        tmp_path_factory.mktemp("budgets"),
        model,
        ["1", "3"],
        agent_token_limit=3000,
        agent_time_limit=6,
        agent_tool_timeout=10,
    )


def test_step_time_limit(budgets):
    verdict, record = _steps(budgets["1"])["1.1"], _agent(budgets["1"])["1.1"]
    assert verdict["reason_kind"] == "limit" and "Time limit" in verdict["reason"], verdict
    assert record["limit"] == "time" and 5 < record["seconds"] < HANG_S  # 6 s, then the limit


def test_step_token_limit(budgets):
    verdict, record = _steps(budgets["3"])["3.1"], _agent(budgets["3"])["3.1"]
    assert verdict["reason_kind"] == "limit" and "Token limit" in verdict["reason"], verdict
    assert record["limit"] == "token" and record["tokens"] > 3000
    summary = budgets["3"].scores["scicode_scorer"].metadata["agent"]
    assert summary["ended_by_limit"] == 1 and summary["limit_share"] == 1.0
