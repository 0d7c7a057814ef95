"""SciBench (Wang et al., ICML 2024) as Inspect tasks: faithful to the official code, and better."""
