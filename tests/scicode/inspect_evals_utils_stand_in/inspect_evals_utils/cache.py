"""inspect_evals' cache folder: ``INSPECT_EVALS_CACHE_DIR``, read once at import (inspect_evals
derives its module-level paths from it), else a folder in the user's cache."""

import os
from pathlib import Path

INSPECT_EVALS_CACHE_PATH = Path(
    os.environ.get("INSPECT_EVALS_CACHE_DIR") or Path.home() / ".cache" / "inspect_evals"
).expanduser()
