"""The user's errors as Inspect's prerequisite errors, where Inspect is the one to print them.

A task refuses a parameter or misses a file with the ``InputError``, ``ArtifactError`` or
``FileNotFoundError`` the rest of scievals raises. Raised while ``inspect eval`` builds the task
(or ``inspect score`` scores), such an error must also be Inspect's ``PrerequisiteError``:
Inspect prints those as their message alone, without a traceback. (This module imports Inspect,
so ``scievals.inputs`` stays light.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from inspect_ai._util.error import PrerequisiteError  # Inspect exports no public name for it
from rich.markup import escape

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError


class _ShownByInspect(PrerequisiteError):
    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.message = escape(message)  # Inspect prints it through Rich, which reads [markup]


class PrerequisiteInputError(_ShownByInspect, InputError):
    """A task parameter is wrong (the message names it, the value and the choices)."""


class PrerequisiteArtifactError(_ShownByInspect, ArtifactError):
    """A file the task needs is missing (the message says how to get it)."""


class PrerequisiteFileNotFoundError(_ShownByInspect, FileNotFoundError):
    """A file or folder the user named is not there."""


@contextmanager
def prerequisite() -> Iterator[None]:
    """Re-raise the user's errors (building a task, finding its targets) so that Inspect prints
    them plainly; they stay the same kinds of error for everyone else."""
    try:
        yield
    except InputError as exc:
        raise PrerequisiteInputError(str(exc)) from None
    except ArtifactError as exc:
        raise PrerequisiteArtifactError(str(exc)) from None
    except FileNotFoundError as exc:
        raise PrerequisiteFileNotFoundError(str(exc)) from None
