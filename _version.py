"""The package version, kept in one place (read by pyproject.toml and ``hapticam --version``)."""

__version__ = "0.1.0"
