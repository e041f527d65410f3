"""Word-frequency reports for plain-text files."""

from .counter import count_words, top_words
from .report import render_report
from .tokenize import tokenize

__all__ = ["count_words", "render_report", "tokenize", "top_words"]
