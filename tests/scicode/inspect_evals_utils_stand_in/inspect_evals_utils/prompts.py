"""Prompt templates: stand-ins that refuse."""

from inspect_evals_utils._stand_in import kind

Prompt = kind(__name__, "Prompt")
