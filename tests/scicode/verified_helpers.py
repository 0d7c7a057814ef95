"""Where the tests find the shared SciCode-Verified copy (``../shared/data/scicode-verified``
beside the clone; ``SCIEVALS_TEST_SCICODE_VERIFIED`` for another place), and the skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VERIFIED_DATA = Path(
    os.environ.get(
        "SCIEVALS_TEST_SCICODE_VERIFIED",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scicode-verified",
    )
).resolve()
needs_verified_data = pytest.mark.skipif(
    not (VERIFIED_DATA / "manifest.json").is_file(),
    reason=f"SciCode-Verified copy not found at {VERIFIED_DATA}",
)
