"""Seeded shuffling: stand-ins that refuse."""

from inspect_evals_utils._stand_in import function

shuffle_and_seed = function(__name__, "shuffle_and_seed")
