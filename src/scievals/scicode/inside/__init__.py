"""SciCode's grading programs that run inside the scoring runtime, in every step program: the
floor below all of SciCode's (they import nothing of scievals).

``recorder`` (what the step's program records of the model's code), ``wire`` (the record's value
forms, which the trusted side decodes) and ``compare`` (the official comparison helpers, which
both sides use), shipped by ``scievals.shipped``; ``events`` (the record's events and their
order, which only the trusted side checks) beside them, as the other half of the record's
contract. Standard library and the scoring libraries only.
"""
