"""SciCode's grading programs that run inside the scoring runtime, in every step program: the
floor below all of SciCode's (they import nothing of scievals).

``recorder`` (what the step's program records of the model's code), ``wire`` (the record's
format, which the trusted side decodes) and ``compare`` (the official comparison helpers, which
both sides use). Standard library and the scoring libraries only; shipped by
``scievals.shipped``.
"""
