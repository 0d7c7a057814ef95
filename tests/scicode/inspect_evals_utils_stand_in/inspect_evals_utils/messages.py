"""Message-text helpers: stand-ins that refuse."""

from inspect_evals_utils._stand_in import function

message_content_text = function(__name__, "message_content_text")
reasoning_to_text = function(__name__, "reasoning_to_text")
