"""Code-block helpers (3-A's extraction, run only when scoring): stand-ins that refuse."""

from inspect_evals_utils._stand_in import function

defines = function(__name__, "defines")
extract_code_block = function(__name__, "extract_code_block")
extract_code_blocks = function(__name__, "extract_code_blocks")
strip_json_fence = function(__name__, "strip_json_fence")
