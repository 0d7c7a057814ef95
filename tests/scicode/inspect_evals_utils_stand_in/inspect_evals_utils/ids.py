"""Sample-id helpers: stand-ins that refuse."""

from inspect_evals_utils._stand_in import function, kind

DuplicateIdError = kind(__name__, "DuplicateIdError", Exception)
KnownBrokenSampleError = kind(__name__, "KnownBrokenSampleError", Exception)
create_stable_id = function(__name__, "create_stable_id")
drop_known_broken = function(__name__, "drop_known_broken")
filter_duplicate_ids = function(__name__, "filter_duplicate_ids")
require_optional_dependency = function(__name__, "require_optional_dependency")
