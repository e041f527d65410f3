"""The text report printed by the command line."""

from __future__ import annotations

from typing import Iterable

from .counter import DEFAULT_STOPWORDS, top_words
from .tokenize import tokenize


def render_report(text: str, n: int = 5, stopwords: Iterable[str] = DEFAULT_STOPWORDS) -> str:
    tokens = tokenize(text)
    unique = len(set(tokens))
    lines = [f"{len(tokens)} words, {unique} unique"]
    ranked = top_words(tokens, n, stopwords)
    width = max((len(word) for word, _ in ranked), default=0)
    for word, count in ranked:
        lines.append(f"  {word:<{width}}  {count}")
    return "\n".join(lines) + "\n"
