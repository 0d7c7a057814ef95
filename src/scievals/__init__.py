"""scievals: faithful, fast and safe evaluation of language models on SciCode and SciBench."""

__version__ = "0.1.0"
