"""The user's errors while a task is built, as Inspect's prerequisite errors.

A task refuses a parameter or misses a file with the ``InputError``, ``ArtifactError`` or
``FileNotFoundError`` the rest of scievals raises. Raised while ``inspect eval`` builds the task,
such an error must also be Inspect's ``PrerequisiteError``: Inspect prints those as their message
alone, without a traceback. (This module imports Inspect, so ``scievals.inputs`` stays light.)
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


class TaskInputError(_ShownByInspect, InputError):
    """A task parameter is wrong (the message names it, the value and the choices)."""


class TaskArtifactError(_ShownByInspect, ArtifactError):
    """A file the task needs is missing (the message says how to get it)."""


class TaskFileNotFoundError(_ShownByInspect, FileNotFoundError):
    """A file or folder the user named is not there."""


@contextmanager
def building_task() -> Iterator[None]:
    """Re-raise the user's errors from building a task so that Inspect prints them plainly."""
    try:
        yield
    except InputError as exc:
        raise TaskInputError(str(exc)) from None
    except ArtifactError as exc:
        raise TaskArtifactError(str(exc)) from None
    except FileNotFoundError as exc:
        raise TaskFileNotFoundError(str(exc)) from None
