"""Runs the installed inspect_evals package's own ``scicode`` task with a scripted model.

Executed by the python of a separate environment holding ``inspect-evals`` (never imported by
the tests): ``python inspect_evals_driver.py REPLIES.json LOG_DIR SAMPLE_ID,...``, with
``INSPECT_EVALS_CACHE_DIR`` naming a folder that already holds the problem files (checked by the
package against its own sha256). The model answers step ``<problem>.<k>`` with ``REPLIES[step]``:
the problem id is the chat's first user message, and ``k - 1`` replies precede the k-th step.

The task needs the official ``test_data.h5`` (1 GB) only to score; it is generated with
``--no-score`` here, so a stand-in file takes the download's place (each sample's sandbox gets a
copy), and the sandbox is the local one (no Docker daemon): nothing runs in it.

The task is the package's own task object (``scicode(include_dev_set=True)``), not looked up by
name: the log records the same task, arguments and version either way, and with the tests'
stand-in for ``inspect-evals-utils`` (0.28.0) the package's registry module, which imports every
eval, cannot load (other evals build that package's prompts at import: Inspect warns in one
line), while ``inspect_evals.scicode`` imports and runs.
"""

import json
import sys
from pathlib import Path

import inspect_evals.scicode.dataset as dataset
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_evals.scicode import scicode

REPLIES: dict[str, str] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))


def stand_in_test_data() -> None:
    dataset.TEST_DATA_PATH.write_bytes(b"stand-in: not the official test_data.h5\n")


class Scripted(ModelAPI):
    async def generate(self, input, tools, tool_choice, config):  # noqa: A002 (Inspect's name)
        problem = next(m.text for m in input if m.role == "user")
        k = 1 + sum(m.role == "assistant" for m in input)
        return ModelOutput.from_content(self.model_name, REPLIES[f"{problem}.{k}"])


@modelapi(name="scripted")
def scripted() -> type[ModelAPI]:
    return Scripted


dataset.maybe_download_test_data = stand_in_test_data
[log] = inspect_eval(
    scicode(include_dev_set=True),
    model="scripted/model",
    sample_id=sys.argv[3].split(","),
    sandbox="local",
    score=False,
    display="none",
    log_dir=sys.argv[2],
)
print(log.location)
sys.exit(0 if log.status == "success" else 1)
