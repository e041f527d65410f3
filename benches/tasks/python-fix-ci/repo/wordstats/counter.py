"""Counting words and picking the most frequent ones."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

DEFAULT_STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i in is it its of on or that the this "
    "to was were will with".split()
)


def count_words(tokens: Iterable[str], stopwords: Iterable[str] = ()) -> Counter:
    skip = set(stopwords)
    return Counter(token for token in tokens if token not in skip)


def top_words(tokens: Iterable[str], n: int = 10, stopwords: Iterable[str] = ()) -> list[tuple[str, int]]:
    """The `n` most frequent words as (word, count) pairs.

    Most frequent first; words with the same count are in alphabetical order, so the
    output is the same whatever order the text mentions them in.
    """
    if n < 0:
        raise ValueError("n cannot be negative")
    counts = count_words(tokens, stopwords)
    ranked = sorted(counts.items(), key=lambda pair: pair[1], reverse=True)
    return ranked[:n]
