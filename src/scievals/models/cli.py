"""``scievals serve local`` and ``scievals models list|fetch``.

Serving puts a local GGUF model behind llama-cpp-python's OpenAI-compatible server, so it is
evaluated through Inspect's standard ``openai-api/`` provider: the same path users take with
vLLM, llama.cpp's own server or Ollama.
"""

from __future__ import annotations

import argparse
import sys

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.models.files import DEFAULT_MODEL, DEFAULT_MODEL_ENV, MODELS, fetch, resolve, say
from scievals.models.local import DEFAULT_N_CTX, default_threads


def register(groups: dict) -> None:
    serve = groups["root"].add_parser(
        "serve",
        help="serve a local model over an OpenAI-compatible API",
        description="e.g. scievals serve local --model qwen2.5-coder-0.5b --port 8000",
    )
    serve.add_argument("backend", choices=["local"], help="local: a GGUF model via llama.cpp")
    serve.add_argument(
        "--model",
        default=None,
        help=f"catalogue name or GGUF path (default: ${DEFAULT_MODEL_ENV} or {DEFAULT_MODEL})",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--n-threads", type=int, default=None, help="default: usable CPUs less one")
    serve.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX, help="context tokens")
    serve.set_defaults(func=_cmd_serve)

    models = (
        groups["root"]
        .add_parser("models", help="local model files")
        .add_subparsers(dest="action", required=True)
    )
    models.add_parser("list", help="catalogue models and where they are cached").set_defaults(
        func=_cmd_list
    )
    fetch_p = models.add_parser("fetch", help="fetch and verify model files (cached)")
    fetch_p.add_argument("names", nargs="*", help=f"default: {DEFAULT_MODEL}")
    fetch_p.set_defaults(func=_cmd_fetch)


def _cmd_serve(ns: argparse.Namespace) -> int:
    from scievals.models.local import import_llama

    import_llama()
    try:
        import uvicorn
        from llama_cpp.server.app import (
            create_app,
        )  # inspect-evals-lint: ignore[external_dependencies] -- built by scripts/build_llama.sh with portable flags (see pyproject.toml), never from the registry
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as exc:
        raise ArtifactError(
            f"the llama-cpp-python server extras are missing ({exc.name}): "
            "run scripts/build_llama.sh"
        ) from exc

    name, path = resolve(ns.model)
    url = f"http://{ns.host}:{ns.port}/v1"
    app = create_app(
        server_settings=ServerSettings(host=ns.host, port=ns.port),
        model_settings=[
            ModelSettings(
                model=str(path),
                model_alias=name,
                n_ctx=ns.n_ctx,
                n_threads=ns.n_threads or default_threads(),
                verbose=False,
            )
        ],
    )
    say(f"serving {name} ({path}) at {url}")
    say(
        f"evaluate it with: LOCAL_API_KEY=none scievals eval scicode "
        f"--model openai-api/local/{name} --model-base-url {url}"
    )
    say(
        "(this server applies repeat_penalty 1.1 unless a request says otherwise; for the "
        """same decoding as scievals/local add --extra-body '{"repeat_penalty": 1.0}')"""
    )
    uvicorn.run(app, host=ns.host, port=ns.port, log_level="warning")
    return 0


def _cmd_list(ns: argparse.Namespace) -> int:
    from scievals.paths import cache_dir

    cached = cache_dir("models")
    for model in MODELS.values():
        state = "cached" if (cached / model.filename).exists() else "not fetched"
        default = "  [default]" if model.name == DEFAULT_MODEL else ""
        print(f"{model.name:20} {model.description} ({state}){default}")
    return 0


def _cmd_fetch(ns: argparse.Namespace) -> int:
    for name in ns.names or [DEFAULT_MODEL]:
        if name not in MODELS:
            raise InputError(f"unknown model {name!r}: use one of {', '.join(MODELS)}")
        print(fetch(MODELS[name]), file=sys.stdout)
    return 0
