"""How a SciCode step is graded: its program, the sandboxed recorder, the record format, the
trusted re-run of its tests, and the schedule that keeps every core busy (see
docs/scicode-grading.md)."""
