"""``scievals serve local`` and ``scievals models list|fetch``.

Serving puts a local GGUF model behind llama-cpp-python's OpenAI-compatible server, so it is
evaluated through Inspect's standard ``openai-api/`` provider: the same path users take with
vLLM, llama.cpp's own server or Ollama. With an API key (``--api-key`` or ``$SCIEVALS_API_KEY``,
as vLLM's ``--api-key`` / ``$VLLM_API_KEY``) every request must carry
``Authorization: Bearer KEY``, or gets 401.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import json
import os
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.models.files import DEFAULT_MODEL, DEFAULT_MODEL_ENV, MODELS, fetch, resolve, say
from scievals.models.settings import DEFAULT_N_CTX, default_threads

API_KEY_ENV = "SCIEVALS_API_KEY"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
_UNAUTHORIZED = json.dumps(
    {
        "error": {
            "message": "missing or wrong API key: send 'Authorization: Bearer KEY'",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
).encode()


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
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: loopback only)"
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--api-key",
        default=os.environ.get(API_KEY_ENV),
        help=f"key every request must carry as 'Authorization: Bearer KEY' "
        f"(default: ${API_KEY_ENV}; prefer it: a command line is visible to other users)",
    )
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


def require_key(app: App, key: str) -> App:
    """ASGI middleware: a request (any path) without ``Authorization: Bearer KEY`` gets 401.

    The key is compared in constant time, so response times do not reveal it.
    """
    expected = key.encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, token = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(token.strip(), expected):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": _UNAUTHORIZED})
                return
        await app(scope, receive, send)

    return guarded


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is this machine's loopback (unknown names are not)."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )


def exposure_warning(host: str, key: str | None) -> str | None:
    """The stderr warning for a server other machines can reach, or None on loopback."""
    if is_loopback(host):
        return None
    if key:
        return (
            f"scievals serve: warning: listening on {host}, reachable from other machines; "
            "requests need the API key, and travel unencrypted (plain HTTP)"
        )
    return (
        f"scievals serve: WARNING: listening on {host} with no API key: anyone who can reach "
        f"this machine can use the model; set {API_KEY_ENV} (or --api-key), or serve on 127.0.0.1"
    )


def _cmd_serve(ns: argparse.Namespace) -> int:
    from scievals.models.local import import_llama

    if ns.api_key is not None and not ns.api_key.strip():
        raise InputError(f"the API key is empty: give one, or unset {API_KEY_ENV}")
    if (warning := exposure_warning(ns.host, ns.api_key)) is not None:
        print(warning, file=sys.stderr, flush=True)
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
    key = f"${API_KEY_ENV}" if ns.api_key else "none"
    say(f"serving {name} ({path}) at {url}" + (" (API key required)" if ns.api_key else ""))
    say(
        f"evaluate it with: LOCAL_API_KEY={key} scievals eval scicode "
        f"--model openai-api/local/{name} --model-base-url {url}"
    )
    say(
        "(this server applies repeat_penalty 1.1 unless a request says otherwise; for the "
        """same decoding as scievals/local add --extra-body '{"repeat_penalty": 1.0}')"""
    )
    served = require_key(app, ns.api_key) if ns.api_key else app
    uvicorn.run(served, host=ns.host, port=ns.port, log_level="warning")
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
