"""The sandbox provider: isolation, limits, hostile programs, machinery failures."""
