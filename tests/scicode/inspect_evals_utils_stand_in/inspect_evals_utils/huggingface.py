"""Hugging Face access: stand-ins that refuse (the tests reach no hub)."""

from inspect_evals_utils._stand_in import function, kind

BackoffConfig = kind(__name__, "BackoffConfig")
BACKOFF_CONFIG = function(__name__, "BACKOFF_CONFIG")
CI_BACKOFF_CONFIG = function(__name__, "CI_BACKOFF_CONFIG")
HF_RATE_LIMIT_WINDOW_MINS = function(__name__, "HF_RATE_LIMIT_WINDOW_MINS")
STANDARD_BACKOFF_CONFIG = function(__name__, "STANDARD_BACKOFF_CONFIG")
TRANSIENT_ERROR_CODES = function(__name__, "TRANSIENT_ERROR_CODES")
auto_model_for_sequence_classification = function(
    __name__, "auto_model_for_sequence_classification"
)
auto_tokenizer = function(__name__, "auto_tokenizer")
get_dataset_split_names = function(__name__, "get_dataset_split_names")
hf_backoff_policy = function(__name__, "hf_backoff_policy")
hf_dataset = function(__name__, "hf_dataset")
hf_hub_download = function(__name__, "hf_hub_download")
load_dataset = function(__name__, "load_dataset")
sentence_transformer = function(__name__, "sentence_transformer")
should_retry = function(__name__, "should_retry")
snapshot_download = function(__name__, "snapshot_download")
transformers_pipeline = function(__name__, "transformers_pipeline")
