"""Follow and filter JSON-lines log files."""

__version__ = "0.4.1"
