"""Grading's programs that run inside the scoring runtime, in every step program.

``recorder`` (what the step's program records of the model's code), ``wire`` (the record's
format, which the trusted side decodes) and ``compare`` (the official comparison helpers, which
both sides use). Standard library and the scoring libraries only; shipped by
``scievals.shipped``.
"""
