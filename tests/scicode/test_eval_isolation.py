"""A real eval: Inspect hands the scorer a proxy of the sample's sandbox, and each step program
still runs in a directory of its own (``sandbox.execution.scievals_sandbox``)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from scievals.scicode.data.dataset import find_step
from scievals.scicode.task import scicode

MARK = (
    "import glob as _g, uuid as _u\n"
    "_others = _g.glob('*.mark')\n"
    "open(f'{_u.uuid4().hex}.mark', 'w').close()\n"
    "assert not _others, f'another step program left {_others}'\n"
)


@pytest.mark.slow
def test_step_programs_of_an_eval_sample_do_not_share_a_directory(tmp_path, dev_targets_file):
    """Problem 29's three step programs all run 29.1's code, which fails if another program's
    mark is in its directory: in a real eval every step passes."""
    codes = [find_step(s, "dev")[1].gold_code for s in ("29.1", "29.2", "29.3")]
    codes[0] = MARK + codes[0]
    replies = [
        ModelOutput.from_content("mockllm/model", f"```python\n{code}\n```") for code in codes
    ]
    model = get_model("mockllm/model", custom_outputs=replies)
    log = inspect_eval(
        scicode(split="dev"),
        model=model,
        sample_id="29",
        display="none",
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success", log.error
    steps = log.samples[0].scores["scicode_scorer"].metadata["steps"]
    assert [(v["step"], v["passed"], v["reason"]) for v in steps] == [
        (s, True, None) for s in ("29.1", "29.2", "29.3")
    ]
