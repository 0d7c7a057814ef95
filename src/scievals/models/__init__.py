"""Model APIs of our own, reached as ``scievals/<name>`` from Inspect (``api.scievals_model``),
the local model's files and server. Names are imported on first use, so the command line can
read the catalogue without loading Inspect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.models.api import scievals_model
    from scievals.models.reference import PROBE_KEY, REPLY_KEY

_EXPORTS = {
    "PROBE_KEY": "reference",
    "REPLY_KEY": "reference",
    "scievals_model": "api",
}
__all__ = [
    "PROBE_KEY",
    "REPLY_KEY",
    "scievals_model",
]

lazy_exports(__name__, _EXPORTS)
