"""Grader vocabulary and verdict parsing: stand-ins that refuse."""

from inspect_evals_utils._stand_in import function, kind

GraderFailureMode = kind(__name__, "GraderFailureMode")
VerdictMatch = kind(__name__, "VerdictMatch")
VerdictParseFailure = kind(__name__, "VerdictParseFailure", Exception)
GRADER_FAILED = function(__name__, "GRADER_FAILED")
GRADER_INVALID_GRADE = function(__name__, "GRADER_INVALID_GRADE")
GRADER_NO_TOOL_CALL = function(__name__, "GRADER_NO_TOOL_CALL")
GRADER_PARSE_FAILURE = function(__name__, "GRADER_PARSE_FAILURE")
GRADER_REFUSAL = function(__name__, "GRADER_REFUSAL")
GRADER_SCHEMA_MISMATCH = function(__name__, "GRADER_SCHEMA_MISMATCH")
INVALID_RESPONSE_FORMAT = function(__name__, "INVALID_RESPONSE_FORMAT")
NO_RESPONSE = function(__name__, "NO_RESPONSE")
REFUSAL = function(__name__, "REFUSAL")
SCORING_FAILED = function(__name__, "SCORING_FAILED")
VERDICT_LABEL = function(__name__, "VERDICT_LABEL")
find_verdict = function(__name__, "find_verdict")
parse_verdict = function(__name__, "parse_verdict")
verdict_instruction = function(__name__, "verdict_instruction")
