"""The stand-in project folder (see its pyproject.toml); a package only so the test tree is one."""
