"""Split text into lower-case words."""

from __future__ import annotations

import re
import unicodedata

# A word is a run of letters and digits. An apostrophe or hyphen *between* two such runs
# joins them into one word ("don't", "state-of-the-art", "rock'n'roll"); anywhere else
# (leading, trailing, doubled) it is just punctuation.
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")

_APOSTROPHES = {"\u2019": "'", "\u2018": "'", "\u02bc": "'"}
_DASHES = {"\u2010": "-", "\u2011": "-"}


def normalize(text: str) -> str:
    """NFC-normalize, case-fold, and map typographic apostrophes and hyphens to ASCII."""
    text = unicodedata.normalize("NFC", text).casefold()
    for fancy, plain in {**_APOSTROPHES, **_DASHES}.items():
        text = text.replace(fancy, plain)
    return text


def tokenize(text: str) -> list[str]:
    return _WORD.findall(normalize(text))
