"""The ``scievals`` model API, reached as ``scievals/<name>`` from Inspect.

One Inspect model API named ``scievals`` dispatches on the model name, so that
``--model scievals/reference``, ``--model scievals/local`` and
``--model scievals/local/qwen2.5-coder-0.5b`` (or a GGUF path) all work.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

from scievals.inputs import InputError


@modelapi(name="scievals")
def scievals_model() -> type[ModelAPI]:
    return _dispatch


def _dispatch(
    model_name: str,
    base_url: str | None = None,
    api_key: str | None = None,
    config: GenerateConfig = GenerateConfig(),
    **model_args: Any,
) -> ModelAPI:
    kind, _, rest = model_name.partition("/")
    if kind == "reference":
        from scievals.models.reference import ReferenceModel

        return ReferenceModel(model_name, base_url, api_key, config, **model_args)
    if kind == "local":
        from scievals.models.local import LocalModel

        return LocalModel(model_name, base_url, api_key, config, **model_args)
    raise InputError(
        f"unknown scievals model {model_name!r}: use scievals/reference, scievals/local "
        "or scievals/local/<name-or-gguf-path>"
    )
