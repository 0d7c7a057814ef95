"""Agentic protocols for both benchmarks: an Inspect agent answers each step, after running its
code in the sandbox with Inspect's tools; its answer is graded as a single-turn reply is.

``resolve`` names the agent, ``limits`` bounds each step (``step_limits`` enforces them),
``tools`` and ``environment`` say where its code runs (never where it is graded), ``step`` runs
one step and records it.
"""
