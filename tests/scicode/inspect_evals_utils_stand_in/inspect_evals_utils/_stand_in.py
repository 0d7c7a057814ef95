"""The stand-ins for names inspect_evals imports but the tests' scicode runs never use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


def refuse(what: str) -> NoReturn:
    raise NotImplementedError(
        f"stand-in: {what} is not implemented here (the package registry did not serve "
        "inspect-evals-utils; scievals' tests stand in only what scicode's logs need)"
    )


def function(module: str, name: str) -> Callable[..., NoReturn]:
    """A function (or a constant, read only by code the tests never run) that refuses."""

    def refusing(*args: Any, **kwargs: Any) -> NoReturn:
        refuse(f"{module}.{name}")

    refusing.__name__ = refusing.__qualname__ = name
    refusing.__module__ = module
    return refusing


def kind(module: str, name: str, base: type = object) -> type:
    """A class that refuses to be made: a class still, as inspect_evals' modules may name it in
    annotations, subclass it or catch it when they load."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        refuse(f"{module}.{name}")

    return type(name, (base,), {"__init__": __init__, "__module__": module})
