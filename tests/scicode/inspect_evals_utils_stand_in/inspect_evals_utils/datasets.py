"""Datasets from local files, by Inspect's own readers; remote ones refuse.

The real package caches remote files under ``eval_name`` and ``cache_tag``; a local file needs
no cache, so those arguments are taken and left unused here.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from inspect_ai.dataset import Dataset, csv_dataset, json_dataset
from inspect_evals_utils._stand_in import function, refuse

_LOCAL_SCHEMES = ("", "file")


def _local(file_path: str, loader: str) -> str:
    if urlparse(file_path).scheme not in _LOCAL_SCHEMES:
        refuse(f"{__name__}.{loader} of a remote file ({file_path})")
    return file_path


def load_json_dataset(
    file_path: str,
    eval_name: str | None = None,
    cache_tag: str | None = None,
    refresh: bool = False,
    **kwargs: Any,
) -> Dataset:
    """``inspect_ai.dataset.json_dataset`` of a local JSON or JSONL file."""
    return json_dataset(_local(file_path, "load_json_dataset"), **kwargs)


def load_csv_dataset(
    file_path: str,
    eval_name: str | None = None,
    cache_tag: str | None = None,
    refresh: bool = False,
    **kwargs: Any,
) -> Dataset:
    """``inspect_ai.dataset.csv_dataset`` of a local CSV file."""
    return csv_dataset(_local(file_path, "load_csv_dataset"), **kwargs)


LOCAL_PROTOCOL = function(__name__, "LOCAL_PROTOCOL")
SUPPORTED_REMOTE_URL_PROTOCOLS = function(__name__, "SUPPORTED_REMOTE_URL_PROTOCOLS")
TRANSIENT_ERRORS = function(__name__, "TRANSIENT_ERRORS")
cache_dataset_loader = function(__name__, "cache_dataset_loader")
get_cached_fname = function(__name__, "get_cached_fname")
is_remote_url = function(__name__, "is_remote_url")
is_transient_error = function(__name__, "is_transient_error")
