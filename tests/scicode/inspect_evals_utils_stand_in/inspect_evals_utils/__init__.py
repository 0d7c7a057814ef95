"""A stand-in for ``inspect-evals-utils``, written for scievals' tests (no copy of it).

inspect-evals 0.28.0 moved its utilities to that package (``inspect-evals-utils==0.2.0``), which
the package registry these tests reach does not serve. So that the tests still make their logs
with 0.28.0's own ``scicode`` task, solver, prompts and Inspect's log writer, this package gives
what that path needs, from the behaviour it relies on: the cache folder
(``cache.INSPECT_EVALS_CACHE_PATH``) and loading a local JSON or CSV dataset
(``datasets.load_json_dataset``, ``load_csv_dataset``). Every other name inspect_evals imports
when it loads its tasks is here only so that those imports succeed: calling it (or making one)
raises ``NotImplementedError("stand-in: ...")``. Scoring, which would call the code-block
helpers, is never run by those tests (``--no-score``).
"""
