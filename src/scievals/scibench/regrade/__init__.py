"""``scievals regrade SOURCE`` for OpenCompass's SciBench output: its prediction files graded by
the ``opencompass``, ``faithful`` and ``robust`` scorers, and compared with its results files.

One job per module: ``bounded`` reads one untrusted JSON file within bounds, ``layout`` the
OpenCompass folder and its files, ``mapping`` finds the problem each prediction answers,
``grading`` grades through ``scievals grade scibench``'s code, ``compare`` sets the source's
scores against the official rule's; ``cli`` is the command. ``looks_like`` (cheap, bounded) tells
the command that SOURCE is OpenCompass output, ``run`` grades it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.scibench.regrade.cli import run
    from scievals.scibench.regrade.layout import looks_like

lazy_exports(__name__, {"looks_like": "layout", "run": "cli"})
__all__ = ["looks_like", "run"]
