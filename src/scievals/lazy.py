"""Packages whose public names are imported on first use.

A package's face re-exports its task, scorers and helpers; importing them eagerly made every
``scievals`` command pay for Inspect, SciPy and the report's plots (4 s before ``--help``).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any


class _LazyPackage(types.ModuleType):
    _exports: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        exports = self.__dict__.get("_exports", {})
        if name not in exports:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.__name__}.{exports[name]}"), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a submodule named like an export (``grade``) would otherwise rebind it.
        if name in self.__dict__.get("_exports", {}) and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def lazy_exports(package: str, exports: Mapping[str, str]) -> None:
    """Make ``package`` (a name in ``sys.modules``) import each of ``exports`` (public name ->
    submodule) when first read."""
    module = sys.modules[package]
    module.__dict__["_exports"] = dict(exports)
    module.__class__ = _LazyPackage
