"""SciCode's problems and targets: the verified problem files, SciCode-Verified, the official and
Verified test targets, and dev targets regenerated from gold code."""
